"""rocprof: a Python-first GPU profiler writing ROCm rocpd databases.

    python -m rocprof run train.py          # profile a script
    with rocprof.profile(output_dir="out"): # or a block of code
        ...

Kept light: importing rocprof loads only the version; the native core loads on first use.
"""

from __future__ import annotations

from ._version import __version__

__all__ = ["__version__", "profile", "Session", "library_dir", "roctx_library",
           "roctx_include_dir"]


def __getattr__(name):
    if name in ("profile", "Session"):
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'rocprof' has no attribute {name!r}")


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


def load_ipython_extension(ipython) -> None:
    """`%load_ext rocprof`: the %%rocprof cell magic (rocprof.notebook)."""
    from .notebook import load_ipython_extension as load

    load(ipython)
