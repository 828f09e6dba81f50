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


def library_prefixes(spec: str | None = None) -> list[str]:
    """The site filter's entries (rocprof.capture.site_filter) for --site-filter SPEC."""
    from . import site_filter

    return site_filter.patterns(spec)


def configure(options: Options, settings) -> list[str]:
    """Fill settings.cupti (rocprof._core.CuptiSettings) from the launcher's options."""
    c = settings.cupti
    c.enabled = True
    c.kernels = options.kernel_trace
    c.copies = options.memory_copy_trace
    c.allocations = options.memory_allocation_trace
    c.runtime_api = c.driver_api = c.sync = options.runtime_trace
    c.runtime_queries = options.runtime_trace_all
    # ENTER callbacks on launches/copies/sets only (thread, ROCTx range and call site of each
    # GPU operation) unless synchronisation or allocation records need their thread too.
    c.callbacks = "all" if options.runtime_trace or options.memory_allocation_trace else "launch"
    c.truncate = options.truncate_kernels
    c.mangled = options.mangled_kernels
    c.kernel_include = options.trace_kernel_include_regex or ""
    c.kernel_exclude = options.trace_kernel_exclude_regex or ""
    c.launch_sites = True
    c.graph_trace = options.graph_trace  # kernels of CUDA graph replays: node | graph
    from . import autograd_sites  # backward kernels get the line of their backward() call

    autograd_sites.install()
    c.library_candidates = ":".join(library_candidates())
    if options.counters_requested():
        # --pmc names are required (a bad one turns counters off with its reason); the --sol set
        # is optional per name ("?name": a chip without the metric leaves it out).
        from rocpd import kernel_metrics as metrics

        names = list(dict.fromkeys(options.pmc))
        if options.sol:
            names += [n for n in metrics.sol_metrics() if n[1:] not in names]
        settings.counters.metrics = " ".join(names)
        # rocprofv3's --kernel-include/exclude-regex pick the kernels whose counters are read.
        settings.counters.kernel_include = options.kernel_include_regex or ""
        settings.counters.kernel_exclude = options.kernel_exclude_regex or ""
        settings.counters.origin = "+".join(
            k for k, on in (("pmc", bool(options.pmc)), ("sol", options.sol)) if on)
    # Measurement overrides (benchmarks/gpu_b2_b5.py) come from ROCPROF_CUPTI_OPTIONS, read by
    # the native backend into these same settings ("kernels=1,launch_sites=0,...").
    if hasattr(_core, "_cupti_set_callsite_prefixes"):
        _core._cupti_set_callsite_prefixes("\n".join(library_prefixes(options.site_filter)))
    return []


# The probe (rocprof info) runs before any session: let it find the wheel's copy too.
# Native programs started by `rocprof run -- CMD` must not inherit that choice (a toolkit-built
# program crashed with the PyTorch wheel's CUPTI on an H200 host): the user's own setting is
# kept here for them.
USER_LIBRARY_PATH = os.environ.get("ROCPROF_CUPTI_LIBRARY_PATH")
os.environ.setdefault("ROCPROF_CUPTI_LIBRARY_PATH", ":".join(library_candidates()))
backends.CONFIGURE_GPU["cupti"] = configure
