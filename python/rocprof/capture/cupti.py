"""NVIDIA GPU tracing (native part: cpp/capture/cupti/): Options → "cupti.*" settings.

Also tells the native side where libcupti may be (the nvidia-cuda-cupti wheel that PyTorch
uses comes first, so one process never holds two CUPTI copies) and which file prefixes are
library code, so a kernel's call site names the user's own frames.
"""

from __future__ import annotations

import os
import sys

from .. import _core
from .._libs import library_dir

# typing's constant, without typing: the options are for annotations here, so a followed child
# (in_child) loads neither them nor their option table.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..options import Options


_CANDIDATES: dict = {}  # (sys.path, CUDA_HOME, CUDA_PATH) -> library_candidates()


def library_candidates() -> list[str]:
    """libcupti files from the nvidia-cuda-cupti wheels (CUDA 13 and 12 layouts), then the
    CUDA toolkit named by CUDA_HOME / CUDA_PATH. A session's probe (prepare) and its settings
    (configure) both ask: the folders are listed once for what they depend on."""
    key = (tuple(sys.path), os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"))
    if key not in _CANDIDATES:
        _CANDIDATES[key] = _find_candidates()
    return list(_CANDIDATES[key])


def _find_candidates() -> list[str]:
    import site

    roots = [p for p in sys.path if p and os.path.isdir(p)]
    try:
        roots += site.getsitepackages()
    except AttributeError:  # virtualenvs of old Pythons
        pass
    folders = [os.path.join(root, sub) for root in dict.fromkeys(roots)
               for sub in ("nvidia/cu13/lib", "nvidia/cuda_cupti/lib")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            folders += [os.path.join(home, sub)
                        for sub in ("extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64")]
    found: list[str] = []
    for folder in folders:
        found += _libcupti_files(folder)
    return list(dict.fromkeys(found))


def _libcupti_files(folder: str) -> list[str]:
    """glob(folder/libcupti.so*), sorted, without glob: it loads re and enum, which every run
    on an NVIDIA host would pay before the profiled program starts."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if n.startswith("libcupti.so"))


def library_prefixes(spec: str | None = None) -> list[str]:
    """The site filter's entries (rocprof.capture.site_filter) for --site-filter SPEC."""
    from . import site_filter

    return site_filter.patterns(spec)


def configure(options: Options, settings) -> list[str]:
    """Fill settings.cupti (rocprof._core.CuptiSettings) from the launcher's options."""
    c = settings.cupti
    c.enabled = True
    asked = options.activities()
    c.activities = [a for a in c.SUPPORTED if a in asked]
    c.runtime_queries = options.runtime_trace_all
    c.launch_sites = True
    c.graph_trace = options.graph_trace  # kernels of CUDA graph replays: node | graph
    from . import autograd_sites  # backward kernels: their forward op's line, or backward()'s

    autograd_sites.install()
    c.library_candidates = ":".join(library_candidates())
    if options.counters_requested():
        # --pmc names are required (a bad one turns counters off with its reason); the --sol set
        # is optional per name ("?name": a chip without the metric leaves it out).
        from rocshared import kernel_metrics as metrics

        names = list(dict.fromkeys(options.pmc))
        if options.sol:
            names += [n for n in metrics.sol_metrics() if n[1:] not in names]
        settings.counters.metrics = " ".join(names)
        # rocprofv3's --kernel-include/exclude-regex pick the kernels whose counters are read.
        settings.counters.kernel_include = options.kernel_include_regex or ""
        settings.counters.kernel_exclude = options.kernel_exclude_regex or ""
        settings.counters.origin = "+".join(
            k for k, on in (("pmc", bool(options.pmc)), ("sol", options.sol)) if on)
    from . import pc_sampling  # the launcher's only: a child takes the settings as they are

    pc_sampling.fill(options, settings)
    from . import gpu_metrics

    gpu_metrics.fill(options, settings)
    # Measurement overrides (benchmarks/gpu_b2_b5.py) come from ROCPROF_CUPTI_OPTIONS, read by
    # the native backend into these same settings ("kernels=1,launch_sites=0,...").
    if hasattr(_core, "_cupti_set_callsite_prefixes"):
        _core._cupti_set_callsite_prefixes("\n".join(library_prefixes(options.site_filter)))
    return []


def in_child(settings, spec) -> None:
    """A followed Python child (rocprof.children), with its launcher's settings: the wrapped
    backward passes and the launch sites' library code, as configure() sets them up, and its
    own libcupti candidates where its interpreter is another."""
    from . import autograd_sites

    autograd_sites.install()
    if not spec.same_python:
        settings.cupti.library_candidates = ":".join(library_candidates())
    if hasattr(_core, "_cupti_set_callsite_prefixes"):
        _core._cupti_set_callsite_prefixes(spec.site_prefixes())


# What the native probe reads first (capture/cupti/): no file, no NVIDIA driver loaded.
DRIVER_FILE = "/proc/driver/nvidia/version"

# The user's own ROCPROF_CUPTI_LIBRARY_PATH, as it was before prepare() chose one: native
# programs started by `rocprof run -- CMD` must not inherit our choice (a toolkit-built program
# crashed with the PyTorch wheel's CUPTI on an H200 host).
_USER_LIBRARY_PATH: list = []


def prepare() -> None:
    """Before the first probe of a session: let it find the wheel's copy too. Without an
    NVIDIA driver the probe loads no libcupti (it says why), and the search of every
    sys.path folder is skipped."""
    if not _USER_LIBRARY_PATH:
        _USER_LIBRARY_PATH.append(os.environ.get("ROCPROF_CUPTI_LIBRARY_PATH"))
    if "ROCPROF_CUPTI_LIBRARY_PATH" in os.environ or not os.path.exists(DRIVER_FILE):
        return
    os.environ["ROCPROF_CUPTI_LIBRARY_PATH"] = ":".join(library_candidates())


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """What a command started by `rocprof run -- CMD` needs: native processes find libcupti
    themselves (the copy their CUDA runtime matches: the toolkit's, or the loader path; Python
    processes choose theirs in their own session), and CUDA programs that never load
    libroctx64 are traced through the CUDA driver's injection hook."""
    settings.cupti.library_candidates = ""
    user = _USER_LIBRARY_PATH[0] if _USER_LIBRARY_PATH else os.environ.get(
        "ROCPROF_CUPTI_LIBRARY_PATH")
    if user is None:
        env.pop("ROCPROF_CUPTI_LIBRARY_PATH", None)
    else:
        env["ROCPROF_CUPTI_LIBRARY_PATH"] = user
    if not settings.cupti.enabled:
        return []
    inject = os.path.join(library_dir(), "librocprof_inject.so")
    current = env.get("CUDA_INJECTION64_PATH")
    if current and os.path.realpath(current) != os.path.realpath(inject):
        return [f"CUDA_INJECTION64_PATH is already set ({current}): CUDA programs that do not "
                "load libroctx64 are not traced"]
    env["CUDA_INJECTION64_PATH"] = inject
    return []
