"""rocprof: a Python-first GPU profiler writing ROCm rocpd databases.

    python -m rocprof run train.py          # profile a script
    with rocprof.profile(output_dir="out"): # or a block of code
        ...

Kept light: importing rocprof loads only the version; the native core loads on first use.
"""

from __future__ import annotations

from rocshared.version import __version__

from ._libs import library_dir, roctx_include_dir, roctx_library

__all__ = ["__version__", "profile", "Session", "library_dir", "roctx_library",
           "roctx_include_dir"]


def __getattr__(name):
    if name in ("profile", "Session"):
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'rocprof' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """`%load_ext rocprof`: the %%rocprof cell magic (rocprof.notebook)."""
    from .notebook import load_ipython_extension as load

    load(ipython)
