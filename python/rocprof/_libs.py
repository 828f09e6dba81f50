"""Where the native libraries are: ``rocprof.library_dir()`` and friends, in a module of their own
so that the launcher and the backends use them without importing the package's top (which loads
the notebook magic and the session on demand). The native core is found, not imported, keeping
``import rocprof`` light."""

from __future__ import annotations


def library_dir() -> str:
    """Folder holding the native libraries (librocprof_core.so, libroctx64.so, roctx.h)."""
    import importlib.util
    import os

    return os.path.dirname(os.path.abspath(importlib.util.find_spec("rocprof._core").origin))


def roctx_library() -> str:
    """Path of libroctx64.so, the ROCTx C ABI, for ctypes or linking native code."""
    import os

    return os.path.join(library_dir(), "libroctx64.so")


def roctx_include_dir() -> str:
    """Folder holding roctx.h, for `cc -I$(python -c ...)`; beside the libraries."""
    import os

    return os.path.join(library_dir(), "include")


def already_mapped(name: str) -> bool:
    """Whether this process has mapped a library whose path contains ``name`` (a GPU runtime
    loaded before profiling started comes too late for the tools it would load)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return any(name in line for line in maps)
    except OSError:
        return False
