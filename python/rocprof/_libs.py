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
