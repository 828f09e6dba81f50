"""Which SQLite library the native writer uses: Python's own copy (the one its sqlite3 module
links), never a second one in the process. Python's _sqlite3 extension is mapped by file
without running it: importing it would load functools and more before every profiled program
(B7). An interpreter with _sqlite3 built in, or a file that cannot be mapped: it is imported.
None at all: the core loads libsqlite3 itself."""

from __future__ import annotations

import sys

from . import _core


def bind() -> None:
    if "_sqlite3" in sys.modules:
        return
    try:  # importlib.machinery's, loaded at start-up already (importlib itself is not)
        from _frozen_importlib_external import ExtensionFileLoader, PathFinder
    except ImportError:  # not CPython
        from importlib.machinery import ExtensionFileLoader, PathFinder

    spec = PathFinder.find_spec("_sqlite3")
    if spec is not None and isinstance(spec.loader, ExtensionFileLoader) and spec.origin:
        try:
            _core.load_sqlite_of(spec.origin)
            return
        except RuntimeError:
            pass
    try:
        import _sqlite3  # noqa: F401
    except ImportError:
        pass
