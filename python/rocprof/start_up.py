"""The launcher's start-up and the garbage collector.

No cyclic collection while `rocprof run` imports its modules, parses the command line and sets
up a session: the thousands of objects this makes ran the collector many times before the
profiled program started. When the program starts, the launcher's objects are frozen
(gc.freeze): they live to the end anyway, and the program's collections, and the ones at exit,
never walk them, as they would not exist under plain `python`; the collector is then as it was.
Each followed child does the same around its session's start (_child/sitecustomize.py).
"""

from __future__ import annotations

import gc

_was_on: bool | None = None


def begin() -> None:
    global _was_on
    if _was_on is None:
        _was_on = gc.isenabled()
        gc.disable()


def program_starts() -> None:
    """The launcher's objects frozen, the collector on again if it was."""
    global _was_on
    if _was_on is None:
        return
    gc.freeze()
    if _was_on:
        gc.enable()
    _was_on = None
