"""Run inside the target by sys.remote_exec (PEP 768): arms on-demand capture with the
attacher's options, as `rocprof run --on-demand` arms its processes."""

from __future__ import annotations

import atexit
import json

from ..options import Options
from ..session import Session

_session = None


def arm(spec: str) -> None:
    global _session
    if _session is not None:
        return
    fields = set(Options.field_names())
    given = json.loads(spec)["options"]
    options = Options(**{k: v for k, v in given.items() if k in fields})
    options.on_demand = True
    _session = Session(options)
    _session.start()
    atexit.register(_session.stop)
