"""NVIDIA GPU tracing (native part: cpp/capture/cupti/): Options → "cupti.*" settings.

Also tells the native side where libcupti may be (the nvidia-cuda-cupti wheel that PyTorch
uses comes first, so one process never holds two CUPTI copies) and which file prefixes are
library code, so a kernel's call site names the user's own frames.
"""

from __future__ import annotations

import glob
import os
import site
import sys
import sysconfig

from .. import _core, backends
from ..options import Options


def library_candidates() -> list[str]:
    """libcupti files from the nvidia-cuda-cupti wheels (CUDA 13 and 12 layouts), then the
    CUDA toolkit named by CUDA_HOME / CUDA_PATH."""
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    try:
        roots += site.getsitepackages()
    except AttributeError:  # virtualenvs of old Pythons
        pass
    found: list[str] = []
    for root in dict.fromkeys(roots):
        for pattern in ("nvidia/cu13/lib/libcupti.so*", "nvidia/cuda_cupti/lib/libcupti.so*"):
            found += sorted(glob.glob(os.path.join(root, pattern)))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            for sub in ("extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64"):
                found += sorted(glob.glob(os.path.join(home, sub, "libcupti.so*")))
    return list(dict.fromkeys(found))


def library_prefixes() -> list[str]:
    """Where library code lives: frames from there are never reported as launch sites."""
    paths = sysconfig.get_paths()
    prefixes = {paths.get("stdlib"), paths.get("platstdlib"), paths.get("purelib"),
                paths.get("platlib"), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    try:
        prefixes.update(site.getsitepackages())
    except AttributeError:
        pass
    prefixes.update(p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p))
    return sorted(p.rstrip("/") + "/" for p in prefixes if p)


def _flag(value: bool) -> str:
    return "1" if value else "0"


def configure(options: Options) -> list[str]:
    o = backends.BACKEND_OPTIONS
    o["cupti.enabled"] = "1"
    o["cupti.kernel"] = _flag(options.kernel_trace)
    o["cupti.memcpy"] = _flag(options.memory_copy_trace)
    o["cupti.memory"] = _flag(options.memory_allocation_trace)
    o["cupti.runtime"] = o["cupti.driver"] = o["cupti.sync"] = _flag(options.runtime_trace)
    # ENTER callbacks on launches/copies/sets only (thread, ROCTx range and call site of each
    # GPU operation) unless synchronisation or allocation records need their thread too.
    o["cupti.callbacks"] = ("all" if options.runtime_trace or options.memory_allocation_trace
                            else "launch")
    o["cupti.truncate"] = _flag(options.truncate_kernels)
    o["cupti.mangled"] = _flag(options.mangled_kernels)
    o["cupti.kernel_include"] = options.kernel_include_regex or ""
    o["cupti.kernel_exclude"] = options.kernel_exclude_regex or ""
    callsite = os.environ.get("ROCPROF_GPU_CALLSITE", "1") != "0"
    o["cupti.callsite"] = _flag(callsite)
    o["cupti.library_candidates"] = ":".join(library_candidates())
    # Measurement overrides (benchmarks/gpu_b2_b5.py): ROCPROF_CUPTI_OPTIONS="kernel=1,runtime=0,
    # callbacks=none,timestamp=0,process=0,flush_ms=1000" sets the cupti.* keys above directly.
    for item in os.environ.get("ROCPROF_CUPTI_OPTIONS", "").split(","):
        key, sep, value = item.strip().partition("=")
        if sep and key:
            o["cupti." + key] = value
            if key == "callsite":
                callsite = value == "1"
    if callsite and hasattr(_core, "_cupti_set_callsite_prefixes"):
        _core._cupti_set_callsite_prefixes("\n".join(library_prefixes()))
    return []


# The probe (rocprof info) runs before any session: let it find the wheel's copy too.
# Native programs started by `rocprof run -- CMD` must not inherit that choice (a toolkit-built
# program crashed with the PyTorch wheel's CUPTI on an H200 host): the user's own setting is
# kept here for them.
USER_LIBRARY_PATH = os.environ.get("ROCPROF_CUPTI_LIBRARY_PATH")
os.environ.setdefault("ROCPROF_CUPTI_LIBRARY_PATH", ":".join(library_candidates()))
backends.CONFIGURE_GPU["cupti"] = configure
