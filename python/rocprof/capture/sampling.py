"""Python half of call-stack sampling: turns Options (sample Hz, mode, native stacks) into
the native backend's settings ("sampling.hz", "sampling.mode", "sampling.native")."""

from __future__ import annotations

from .. import backends
from ..options import Options


def configure(options: Options) -> list[str]:
    notes: list[str] = []
    hz = int(options.sample or 1000)
    mode = options.sampling_mode or "cpu"
    if mode not in ("cpu", "wall"):
        raise ValueError(f"sampling mode must be 'cpu' or 'wall', not {mode!r}")
    native = bool(options.native_stacks)
    if native:
        from .. import _core

        if not _core.sampling_native_available():
            notes.append("--native-stacks: this build has no libunwind; recording Python frames only")
            native = False
    backends.BACKEND_OPTIONS["sampling.hz"] = str(hz)
    backends.BACKEND_OPTIONS["sampling.mode"] = mode
    backends.BACKEND_OPTIONS["sampling.native"] = "1" if native else "0"
    return notes


backends.CONFIGURE_SAMPLING["sampling"] = configure
