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

from . import _core
from ._libs import library_dir
from .options import Options


class Backend:
    """One backend (a plain class: the launcher builds the list before the program starts)."""

    __slots__ = ("name", "description", "activities", "module", "gpu", "needs_live",
                 "not_compiled", "listed", "library", "in_child")

    def __init__(self, name: str, description: str, activities: tuple[str, ...],
                 module: str | None = None, gpu: bool = False, needs_live: bool = True,
                 not_compiled: str = "not compiled into this build", listed: bool = True,
                 library: str | None = None, in_child=None):
        self.name = name
        self.description = description
        self.activities = activities  # what it can record (rocprof._core.Activity names)
        # rocprof.capture.<module>: configure(options, settings) -> notes; and, where a child
        # process needs something of it, child_environment(options, settings, env) -> notes.
        # None: configured by another backend (the counters, by their GPU backend).
        self.module = module
        self.gpu = gpu                # one of the GPU tracing backends (a host may have several)
        self.needs_live = needs_live  # False: configured when compiled in; it says what it finds
        self.not_compiled = not_compiled
        self.listed = listed          # False: a test-only backend that `rocprof info` leaves out
        # A library of its own that another program loads (a plugin), not part of the native
        # core: compiled in when the file is in rocprof.library_dir().
        self.library = library
        # settings -> bool: whether each followed Python child runs the module's
        # in_child(settings, spec) (what a process must do for itself: Python hooks, its
        # interpreter's own paths) with the settings this process configured (children.py).
        self.in_child = in_child

    def capture(self):
        return importlib.import_module(f"rocprof.capture.{self.module}") if self.module else None

    def requested(self, options: Options) -> bool:
        return bool(set(self.activities) & options.activities())


GPU_TRACE = ("kernels", "copies", "sets", "allocations", "runtime_api", "driver_api", "sync",
             "hip_api", "hsa_api")

# In the order `rocprof info` lists them.
BACKENDS: tuple[Backend, ...] = (
    Backend("markers", "ROCTx ranges and marks (Python roctx module, libroctx64.so)",
            ("markers",), "markers", needs_live=False),
    Backend("cupti", "NVIDIA GPU tracing through CUPTI",
            tuple(_core.CuptiSettings.SUPPORTED), "cupti", gpu=True,
            in_child=lambda s: s.cupti.enabled),
    Backend("cupti-counters", "NVIDIA per-kernel hardware counters (--pmc, --sol) through "
            "CUPTI's range profiler", ("counters",),
            not_compiled="no CUPTI headers at build time"),
    Backend("cupti-pc-sampling", "NVIDIA PC sampling (--pc-sampling) through CUPTI's PC "
            "sampling API", ("pc_samples",), not_compiled="no CUPTI headers at build time"),
    Backend("hsa", "AMD GPU tracing through the HSA tools interface and HIP",
            tuple(_core.HsaSettings.SUPPORTED), "hsa", gpu=True,
            in_child=lambda s: s.hsa.enabled),
    Backend("rocprofiler-sdk-counters", "AMD per-kernel hardware counters (--pmc) through "
            "rocprofiler-sdk", ("counters",),
            not_compiled="not written yet (it would use rocprofiler-sdk's counter API)"),
    # Configured with the other PC sampler (_configure_pc_sampling); where it is not compiled
    # in, rocprof.capture.pc_sampling_amd says why, on this machine.
    Backend("rocprofiler-sdk-pc-sampling", "AMD PC sampling (--pc-sampling) through "
            "rocprofiler-sdk", ("pc_samples",), "pc_sampling_amd"),
    Backend("sampling", "Python and native call-stack sampling (--sampling-method signal or "
            "thread)", ("samples",), "sampling", in_child=lambda s: s.sampling.hz > 0),
    Backend("metrics", "device and host metrics over time (--process-freq): NVML, AMD SMI, "
            "ROCm SMI, /proc", ("metrics",), "metrics", needs_live=False),
    # NCCL (RCCL too) loads it as its profiler plugin; it records into the loading process's
    # session, so whether NCCL is new enough shows only at run time (rocprof.nccl.plugin).
    Backend("nccl", "NCCL/RCCL collective calls through NCCL's profiler plugin (--rccl-trace)",
            ("collectives",), "nccl", needs_live=False, library="librocprof_nccl.so",
            not_compiled="librocprof_nccl.so is not in this build"),
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


def _not_native(b: Backend) -> tuple[bool, bool, str]:
    """(compiled, live, reason) of a backend the native core does not report: a plugin is
    compiled in when its library is in library_dir(); anything else says why it is not in this
    build (the AMD PC sampler: what this machine has of rocprofiler-sdk)."""
    if b.name == "markers":
        return True, True, ""
    if b.library:
        there = os.path.exists(os.path.join(library_dir(), b.library))
        return there, there, "" if there else b.not_compiled
    if b.name == "rocprofiler-sdk-pc-sampling":
        return False, False, _amd_pc_sampling_reason()
    return False, False, b.not_compiled


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


def _configure_gpu(options: Options, settings) -> list[str]:
    if not options.gpu_requested():
        return []
    gpus = [b for b in BACKENDS if b.gpu]
    notes: list[str] = []
    live = False
    for b in gpus:  # every live one: a host may have both kinds of GPU
        if _status(b.name)["live"]:
            notes += b.capture().configure(options, settings)
            live = True
    if live:
        return notes
    if options.default_gpu:
        return []  # nobody asked: a CPU-only machine is not worth a warning
    reasons = "; ".join(f"{s['name']}: {s['reason'] or 'not live'}"
                        for s in (_status(b.name) for b in gpus))
    what = "hardware counters (--pmc/--sol)" if options.counters_requested() else "GPU tracing"
    return [f"{what} requested but no GPU backend is live here ({reasons}); recording CPU-side data only"]


# What each non-GPU backend's missing part is called in the note that says it is unavailable.
_UNAVAILABLE = {
    "sampling": "--sample requested but call-stack sampling is unavailable here",
    "metrics": "--process-freq requested but device/host metrics are unavailable here",
    "nccl": "--rccl-trace requested but the NCCL profiler plugin is unavailable here; "
            "collectives are recorded as kernels only",
}


def _configure_other(b: Backend, options: Options, settings) -> list[str]:
    if b.name == "markers":
        return b.capture().configure(options, settings)
    if not b.requested(options):
        return []
    status = _status(b.name)
    if not status["live" if b.needs_live else "compiled"]:
        reason = status["reason"] or ("not live" if b.needs_live else "")
        return [f"{_UNAVAILABLE[b.name]} ({reason})"]
    return b.capture().configure(options, settings)


def configure(options: Options) -> tuple[_core.CaptureSettings, list[str]]:
    """The session's typed settings for every backend the options ask for, validated (a bad
    value raises ValueError in one line naming the option), and one line per request no live
    backend can serve."""
    for b in BACKENDS:  # what a requested backend's probe needs before its status is asked
        if b.module and (b.requested(options) or (b.gpu and options.gpu_requested())):
            prepare = getattr(b.capture(), "prepare", None)
            if prepare is not None:
                prepare()
    settings = _core.CaptureSettings()
    # Every GPU backend names and filters its kernels alike (cpp/capture/kernel_names.hpp).
    # --kernel-include/exclude-regex are not these: they pick the kernels whose counters are
    # read (settings.counters), as rocprofv3's do.
    names = settings.kernel_names
    names.truncate = bool(options.truncate_kernels)
    names.mangled = bool(options.mangled_kernels)
    names.include = options.trace_kernel_include_regex or ""
    names.exclude = options.trace_kernel_exclude_regex or ""
    notes: list[str] = []
    notes += _configure_other(get("markers"), options, settings)
    notes += _configure_gpu(options, settings)
    for b in BACKENDS:
        if b.module and not b.gpu and b.name not in ("markers", "rocprofiler-sdk-pc-sampling"):
            notes += _configure_other(b, options, settings)
    notes += _configure_pc_sampling(options, settings)
    settings.validate()
    return settings, notes


def _configure_pc_sampling(options: Options, settings) -> list[str]:
    """Both PC samplers (a host may have both kinds of GPU): NVIDIA's is configured with CUPTI
    (rocprof.capture.cupti), AMD's here; one note when neither is live."""
    if "pc_samples" not in options.activities():
        return []
    nvidia, amd = _status("cupti-pc-sampling"), _status("rocprofiler-sdk-pc-sampling")
    notes: list[str] = []
    if amd["live"]:
        notes += get("rocprofiler-sdk-pc-sampling").capture().configure(options, settings)
    elif not nvidia["live"]:
        notes.append(f"--pc-sampling: no PC sampler is live here (NVIDIA: {nvidia['reason']}; "
                     f"AMD: {amd['reason'] or 'not live'}); no PC samples will be recorded")
    return notes


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
