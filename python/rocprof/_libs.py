"""Where the native libraries are: ``rocprof.library_dir()`` and friends, in a module of their own
so that the launcher and the backends use them without importing the package's top (which loads
the notebook magic and the session on demand). The native core is imported when first asked for,
keeping ``import rocprof`` light."""

from __future__ import annotations


def library_dir() -> str:
    """Folder holding the native libraries (librocprof_core.so, libroctx64.so, roctx.h)."""
    import os

    from . import _core

    return os.path.dirname(os.path.abspath(_core.__file__))


def roctx_library() -> str:
    """Path of libroctx64.so, the ROCTx C ABI, for ctypes or linking native code."""
    import os

    return os.path.join(library_dir(), "libroctx64.so")


def roctx_include_dir() -> str:
    """Folder holding roctx.h, for `cc -I$(python -c ...)`; beside the libraries."""
    import os

    return os.path.join(library_dir(), "include")


def bind_sqlite() -> None:
    """Make the native writer use Python's own SQLite (the library its sqlite3 module links),
    never a second copy in the process: Python's _sqlite3 extension is mapped by file without
    running it (importing it would load functools and more before every profiled program).
    An interpreter with _sqlite3 built in, or a file that cannot be mapped: it is imported.
    None at all: the core loads libsqlite3 itself."""
    import sys

    if "_sqlite3" in sys.modules:
        return
    try:  # importlib.machinery's, loaded at start-up already (importlib itself is not)
        from _frozen_importlib_external import ExtensionFileLoader, PathFinder
    except ImportError:  # not CPython
        from importlib.machinery import ExtensionFileLoader, PathFinder
    from . import _core

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
