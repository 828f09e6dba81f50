"""Capture backends as the Python side sees them: one Backend object per backend, in a static
list, each saying what it can record (rocprof._core.Activity names), how the session's options
configure it, what a child process started by `rocprof run -- CMD` needs from it, and why it
is not live here.

A backend compiled into the native core registers itself there (rocprof._core.backends());
its Python part is a module under rocprof/capture/ with `configure(options, settings)`, which
fills its own part of the typed settings (rocprof._core.CaptureSettings) and returns notes for
the user. Modules are imported when a session is configured, never by importing this one.

Adding a backend: its C++ folder (cpp/capture/<name>/, one add_subdirectory line in
cpp/capture/CMakeLists.txt), its module under rocprof/capture/, and one Backend below.
"""

from __future__ import annotations

import importlib
import os

from . import _core, bounded
from ._libs import library_dir
from .options import Options


class Alternatives:
    """A request several backends serve, any live one of them (a host may have GPUs of both
    kinds): each live one is configured, and one note says so when none is."""

    __slots__ = ("requested", "none_live")

    def __init__(self, requested, none_live):
        self.requested = requested  # options -> bool: whether the options ask for it
        # (options, [(Backend, status)] of every one, none live) -> notes
        self.none_live = none_live


def _no_gpu_backend(options: Options, unserved) -> list[str]:
    if options.default_gpu:
        return []  # nobody asked: a CPU-only machine is not worth a warning
    reasons = "; ".join(f"{s['name']}: {s['reason'] or 'not live'}" for _, s in unserved)
    what = "hardware counters (--pmc/--sol)" if options.counters_requested() else "GPU tracing"
    return [f"{what} requested but no GPU backend is live here ({reasons}); recording CPU-side data only"]


def _no_pc_sampler(options: Options, unserved) -> list[str]:
    reasons = "; ".join(f"{b.vendor}: {s['reason'] or 'not live'}" for b, s in unserved)
    return [f"--pc-sampling: no PC sampler is live here ({reasons}); no PC samples will be recorded"]


def _no_gpu_metrics(options: Options, unserved) -> list[str]:
    reasons = "; ".join(f"{b.vendor}: {s['reason'] or 'not live'}" for b, s in unserved)
    return [f"--gpu-metrics: no GPU metrics sampler is live here ({reasons}); the program runs "
            "without them"]


GPU_TRACING = Alternatives(lambda options: options.gpu_requested(), _no_gpu_backend)
PC_SAMPLERS = Alternatives(lambda options: "pc_samples" in options.activities(), _no_pc_sampler)
GPU_METRICS = Alternatives(lambda options: "gpu_metrics" in options.activities(), _no_gpu_metrics)


class Backend:
    """One backend (a plain class: the launcher builds the list before the program starts)."""

    __slots__ = ("name", "description", "activities", "module", "serves", "vendor", "core",
                 "needs_live", "not_compiled", "unavailable", "listed", "library", "in_child",
                 "prepares")

    def __init__(self, name: str, description: str, activities: tuple[str, ...],
                 module: str | None = None, serves: Alternatives | None = None, vendor: str = "",
                 core: bool = False, needs_live: bool = True,
                 not_compiled="not compiled into this build", unavailable: str = "",
                 listed: bool = True, library: str | None = None, in_child=None,
                 prepares: bool = False):
        self.name = name
        self.description = description
        self.activities = activities  # what it can record (rocprof._core.Activity names)
        # rocprof.capture.<module>: configure(options, settings) -> notes; and, where a child
        # process needs something of it, child_environment(options, settings, env) -> notes.
        # None: configured by another backend (the counters, by their GPU backend).
        self.module = module
        # One of several that serve a request alike (GPU_TRACING, PC_SAMPLERS); None: it alone
        # serves what it records.
        self.serves = serves
        self.vendor = vendor          # the GPUs' maker, for a backend of one kind of GPU
        # Part of the core: in every build, always live, configured for every session (ROCTx).
        self.core = core
        self.needs_live = needs_live  # False: configured when compiled in; it says what it finds
        # Why a build lacks it: a phrase, or a function asked only then (it may look around).
        self.not_compiled = not_compiled
        # The note when its options ask for it and it cannot run here ("(reason)" follows).
        self.unavailable = unavailable
        self.listed = listed          # False: a test-only backend that `rocprof info` leaves out
        # A library of its own that another program loads (a plugin), not part of the native
        # core: compiled in when the file is in rocprof.library_dir().
        self.library = library
        # settings -> bool: whether each followed Python child runs the module's
        # in_child(settings, spec) (what a process must do for itself: Python hooks, its
        # interpreter's own paths) with the settings this process configured (children.py).
        self.in_child = in_child
        # Its module has prepare(), run before any backend's status is asked when the options
        # want it (CUPTI's: where the probe finds libcupti). Only such a module is imported for
        # it: a GPU backend not live here (AMD's on an NVIDIA host, both on a CPU one) loads
        # nothing before the program.
        self.prepares = prepares

    @property
    def gpu(self) -> bool:
        """One of the GPU tracing backends (a host may have several)."""
        return self.serves is GPU_TRACING

    def capture(self):
        return importlib.import_module(f"rocprof.capture.{self.module}") if self.module else None

    def requested(self, options: Options) -> bool:
        return bool(set(self.activities) & options.activities())

    def wanted(self, options: Options) -> bool:
        """Asked for by the options, itself or as one of the backends serving a request."""
        return self.requested(options) or (self.serves is not None and self.serves.requested(options))


GPU_TRACE = ("kernels", "copies", "sets", "allocations", "runtime_api", "driver_api", "sync",
             "hip_api", "hsa_api")

# In the order `rocprof info` lists them.
BACKENDS: tuple[Backend, ...] = (
    Backend("markers", "ROCTx ranges and marks (Python roctx module, libroctx64.so)",
            ("markers",), "markers", core=True, needs_live=False),
    Backend("cupti", "NVIDIA GPU tracing through CUPTI",
            tuple(_core.CuptiSettings.SUPPORTED), "cupti", serves=GPU_TRACING, vendor="NVIDIA",
            in_child=lambda s: s.cupti.enabled, prepares=True),
    Backend("cupti-counters", "NVIDIA per-kernel hardware counters (--pmc, --sol) through "
            "CUPTI's range profiler", ("counters",), vendor="NVIDIA",
            not_compiled="no CUPTI headers at build time"),
    # Configured with CUPTI (rocprof.capture.cupti).
    Backend("cupti-pc-sampling", "NVIDIA PC sampling (--pc-sampling) through CUPTI's PC "
            "sampling API", ("pc_samples",), serves=PC_SAMPLERS, vendor="NVIDIA",
            not_compiled="no CUPTI headers at build time"),
    # Configured with CUPTI (rocprof.capture.cupti).
    Backend("cupti-pm-sampling", "NVIDIA GPU hardware metrics over time (--gpu-metrics) "
            "through CUPTI's PM sampling API, no kernel replay", ("gpu_metrics",),
            serves=GPU_METRICS, vendor="NVIDIA", not_compiled="no CUPTI headers at build time"),
    Backend("hsa", "AMD GPU tracing through the HSA tools interface and HIP",
            tuple(_core.HsaSettings.SUPPORTED), "hsa", serves=GPU_TRACING, vendor="AMD",
            in_child=lambda s: s.hsa.enabled),
    Backend("rocprofiler-sdk-counters", "AMD per-kernel hardware counters (--pmc) through "
            "rocprofiler-sdk", ("counters",), vendor="AMD",
            not_compiled="not written yet (it would use rocprofiler-sdk's counter API)"),
    # Where it is not compiled in, rocprof.capture.gpu_metrics_amd says why.
    Backend("rocprofiler-sdk-device-counting", "AMD GPU hardware metrics over time "
            "(--gpu-metrics) through rocprofiler-sdk's device counting service", ("gpu_metrics",),
            "gpu_metrics_amd", serves=GPU_METRICS, vendor="AMD",
            not_compiled=lambda: _amd_gpu_metrics_reason()),
    # Where it is not compiled in, rocprof.capture.pc_sampling_amd says why, on this machine.
    Backend("rocprofiler-sdk-pc-sampling", "AMD PC sampling (--pc-sampling) through "
            "rocprofiler-sdk", ("pc_samples",), "pc_sampling_amd", serves=PC_SAMPLERS,
            vendor="AMD", not_compiled=lambda: _amd_pc_sampling_reason()),
    Backend("sampling", "Python and native call-stack sampling (--sampling-method signal or "
            "thread)", ("samples",), "sampling", in_child=lambda s: s.sampling.hz > 0,
            unavailable="--sample requested but call-stack sampling is unavailable here"),
    Backend("metrics", "device and host metrics over time (--process-freq): NVML, AMD SMI, "
            "ROCm SMI, /proc", ("metrics",), "metrics", needs_live=False,
            unavailable="--process-freq requested but device/host metrics are unavailable here"),
    # NCCL (RCCL too) loads it as its profiler plugin; it records into the loading process's
    # session, so whether NCCL is new enough shows only at run time (rocprof.nccl.plugin).
    Backend("nccl", "NCCL/RCCL collective calls through NCCL's profiler plugin (--rccl-trace)",
            ("collectives",), "nccl", needs_live=False, library="librocprof_nccl.so",
            not_compiled="librocprof_nccl.so is not in this build",
            unavailable="--rccl-trace requested but the NCCL profiler plugin is unavailable "
                        "here; collectives are recorded as kernels only"),
    # Compiled into rocprof._core; its hook into PyTorch's allocator is rocprof._torch_observer's
    # (built against the build's torch): `reason` says why a build has none.
    Backend("torch-allocator", "PyTorch's caching allocator: each block, segment and "
            "out-of-memory with its Python line (--memory-allocation-trace, --allocator-trace)",
            ("allocations", "allocator"), "torch_memory", needs_live=False,
            in_child=lambda s: s.torch_memory.enabled),
    # Records nothing: shows what adding a backend takes (cpp/capture/null/), built into the
    # test module rocprof._core_testing only.
    Backend("null", "records nothing (tests)", (), None, listed=False),
)


def get(name: str) -> Backend:
    return next(b for b in BACKENDS if b.name == name)


def _amd_pc_sampling_reason() -> str:
    """Why this build has no AMD PC sampler (rocprofiler-sdk's), on this machine."""
    from .capture import pc_sampling_amd

    return pc_sampling_amd.reason()


def _amd_gpu_metrics_reason() -> str:
    from .capture import gpu_metrics_amd

    return gpu_metrics_amd.reason()


def _not_native(b: Backend) -> tuple[bool, bool, str]:
    """(compiled, live, reason) of a backend the native core does not report: a plugin is
    compiled in when its library is in library_dir(); anything else says why it is not in this
    build."""
    if b.core:
        return True, True, ""
    if b.library:
        there = os.path.exists(os.path.join(library_dir(), b.library))
        return there, there, "" if there else b.not_compiled
    return False, False, b.not_compiled() if callable(b.not_compiled) else b.not_compiled


def _row(b: Backend, compiled: bool, live: bool, reason: str) -> dict:
    return dict(name=b.name, description=b.description, compiled=compiled, live=live,
                reason=reason)


def statuses(listed_only: bool = True) -> list[dict]:
    """[{name, description, compiled, live, reason}] for every known backend."""
    native = {name: (compiled, live, reason) for name, compiled, live, reason in _core.backends()}
    out = [_row(b, *(native[b.name] if b.name in native else _not_native(b)))
           for b in BACKENDS if b.listed or not listed_only]
    known = {b.name for b in BACKENDS}
    for name, (compiled, live, reason) in native.items():
        if name not in known:
            out.append(dict(name=name, description="", compiled=compiled, live=live, reason=reason))
    return out


def _status(name: str) -> dict:
    """One backend's status, probing only that one (a probe may load libraries: ROCm SMI,
    libunwind ...; a session asks only about the backends its options need). One the native
    core does not report (not compiled in) is answered without probing any other: every GPU
    host asks about both GPU backends, and the AMD PC sampler's reason runs ldconfig."""
    for native, compiled, live, reason in _core.backends(name):
        return dict(name=native, compiled=compiled, live=live, reason=reason)
    b = get(name)
    return _row(b, *_not_native(b))


def _configure_alternatives(serves: Alternatives, options: Options, settings) -> list[str]:
    """Every live backend of those serving `serves` that has a module of its own (one without is
    configured by another: CUPTI's PC sampler by CUPTI), or the note that none is live."""
    if not serves.requested(options):
        return []
    notes: list[str] = []
    seen = []
    for b in BACKENDS:
        if b.serves is not serves:
            continue
        status = _status(b.name)
        seen.append((b, status))
        if status["live"] and b.module:
            notes += b.capture().configure(options, settings)
    if any(status["live"] for _, status in seen):
        return notes
    return serves.none_live(options, seen)


def _configure_other(b: Backend, options: Options, settings) -> list[str]:
    if b.core:
        return b.capture().configure(options, settings)
    if not b.requested(options):
        return []
    status = _status(b.name)
    if not status["live" if b.needs_live else "compiled"]:
        reason = status["reason"] or ("not live" if b.needs_live else "")
        return [f"{b.unavailable} ({reason})"]
    return b.capture().configure(options, settings)


def configure(options: Options) -> tuple[_core.CaptureSettings, list[str]]:
    """The session's typed settings for every backend the options ask for, validated (a bad
    value raises ValueError in one line naming the option), and one line per request no live
    backend can serve."""
    for b in BACKENDS:  # what a requested backend's probe needs before its status is asked
        if b.prepares and b.wanted(options):
            b.capture().prepare()
    settings = _core.CaptureSettings()
    # Every GPU backend names and filters its kernels alike (cpp/capture/kernel_names.hpp).
    # --kernel-include/exclude-regex are not these: they pick the kernels whose counters are
    # read (settings.counters), as rocprofv3's do.
    names = settings.kernel_names
    names.truncate = bool(options.truncate_kernels)
    names.mangled = bool(options.mangled_kernels)
    names.include = options.trace_kernel_include_regex or ""
    names.exclude = options.trace_kernel_exclude_regex or ""
    bounded.configure(options, settings)
    notes: list[str] = []
    for b in BACKENDS:  # the core's first: its ranges frame what the others record
        if b.core:
            notes += _configure_other(b, options, settings)
    notes += _configure_alternatives(GPU_TRACING, options, settings)
    for b in BACKENDS:
        if b.module and not b.core and b.serves is None:
            notes += _configure_other(b, options, settings)
    # After the GPU backends: CUPTI's PC sampler is configured with CUPTI.
    notes += _configure_alternatives(PC_SAMPLERS, options, settings)
    notes += _configure_alternatives(GPU_METRICS, options, settings)
    settings.validate()
    return settings, notes


def child_modules(settings) -> list[str]:
    """The capture modules whose in_child() each followed Python child runs (Backend.in_child)."""
    return [b.module for b in BACKENDS if b.in_child is not None and b.in_child(settings)]


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """What a command started by `rocprof run -- CMD` needs of each backend: each one's
    child_environment(options, settings, env) updates `env` and returns notes."""
    notes: list[str] = []
    for b in BACKENDS:
        hook = getattr(b.capture(), "child_environment", None)
        if hook is not None:
            notes += hook(options, settings, env)
    return notes
