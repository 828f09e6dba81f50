"""AMD PC sampling: rocprofiler-sdk's (ROCm 6+), which this build has no backend for.

Found at run time only to say so precisely: whether the library is on this machine, and that
PC sampling on AMD has not been run on AMD hardware by this project.
"""

from __future__ import annotations

import ctypes.util
import glob
import os

_LIB = "librocprofiler-sdk.so"


def find_sdk() -> str | None:
    """The rocprofiler-sdk library on this machine, or None."""
    roots = [os.environ.get("ROCM_PATH"), "/opt/rocm"]
    for root in filter(None, roots):
        hits = sorted(glob.glob(os.path.join(root, "lib", _LIB + "*")))
        if hits:
            return hits[0]
    return ctypes.util.find_library("rocprofiler-sdk")


def reason() -> str:
    """One line for `rocprof info` and `rocprof run --pc-sampling` on a machine without it."""
    found = find_sdk()
    if found is None:
        return "PC sampling on AMD needs rocprofiler-sdk (ROCm >= 6.x); not run on AMD hardware"
    return (f"rocprofiler-sdk is here ({found}) but this build has no AMD PC-sampling backend "
            "(rocprofiler-sdk headers needed at build time); not run on AMD hardware")
