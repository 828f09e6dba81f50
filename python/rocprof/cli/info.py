"""`rocprof info`: what this installation can record on this machine, and why not."""

from __future__ import annotations

import platform
import sys

from .._version import __version__


def add_parser(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _core_native_stacks() -> str:
    """'' when native frames can be sampled, else why not and what to install."""
    from .. import _core

    return "" if _core.sampling_native_available() else _core.sampling_native_reason()


def run(args) -> int:
    from .. import backends, library_dir

    statuses = backends.statuses()
    if args.json:
        import json

        print(json.dumps({"version": __version__, "python": sys.version.split()[0],
                          "library_dir": library_dir(), "backends": statuses,
                          "native_stacks": _core_native_stacks() or "available"}, indent=2))
        return 0
    print(f"rocprof {__version__}")
    print(f"Python {sys.version.split()[0]} ({platform.python_implementation()}) on {platform.machine()}")
    print(f"native libraries: {library_dir()}")
    print("backends:")
    for s in statuses:
        if not s["compiled"]:
            state = "not compiled in"
        elif s["live"]:
            state = "live"
        else:
            state = "compiled, not live"
        reason = f" — {s['reason']}" if s["reason"] else ""
        print(f"  {s['name']:<9} {state}{reason}")
        if s["description"]:
            print(f"            {s['description']}")
    print("AMD (HSA/HIP) capture has not yet run on AMD hardware.")
    return 0
