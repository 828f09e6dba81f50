"""Capture backends as the Python side sees them: what is compiled in, what is live here,
and how the session's options switch each one on.

A backend compiled into the native core registers itself there (rocprof._core.backends());
its Python part lives in this module's CONFIGURE tables: a function that takes the Options
and the session's typed settings (rocprof._core.CaptureSettings), fills its own part, and
returns notes for the user.
"""

from __future__ import annotations

from collections.abc import Callable

from . import _core
from .options import Options

# Backends the project knows about, in the order `rocprof info` lists them.
KNOWN = {
    "markers": "ROCTx ranges and marks (Python roctx module, libroctx64.so)",
    "cupti": "NVIDIA GPU tracing through CUPTI",
    "cupti-counters": "NVIDIA per-kernel hardware counters (--pmc, --sol) through CUPTI's range "
                      "profiler",
    "hsa": "AMD GPU tracing through the HSA tools interface and HIP",
    "rocprofiler-sdk-counters": "AMD per-kernel hardware counters (--pmc) through rocprofiler-sdk",
    "sampling": "Python and native call-stack sampling",
    "metrics": "device and host metrics over time (--process-freq): NVML, AMD SMI, ROCm SMI, /proc",
}

# Why a known backend is missing from a build, where more can be said than "not compiled".
NOT_COMPILED = {
    "rocprofiler-sdk-counters": "rocprofiler-sdk headers (ROCm 6.2+, /opt/rocm/include/"
                                "rocprofiler-sdk) were not found at build time",
    "cupti-counters": "no CUPTI headers at build time",
}


def statuses() -> list[dict]:
    """[{name, description, compiled, live, reason}] for every known backend."""
    native = {name: (compiled, live, reason) for name, compiled, live, reason in _core.backends()}
    native.setdefault("markers", (True, True, ""))
    out = []
    for name, description in KNOWN.items():
        compiled, live, reason = native.get(
            name, (False, False, NOT_COMPILED.get(name, "not compiled into this build")))
        out.append(dict(name=name, description=description, compiled=compiled, live=live,
                        reason=reason))
    for name, (compiled, live, reason) in native.items():
        if name not in KNOWN:
            out.append(dict(name=name, description="", compiled=compiled, live=live, reason=reason))
    return out


def _status(name: str) -> dict:
    return next(s for s in statuses() if s["name"] == name)


def _configure_gpu(options: Options, settings) -> list[str]:
    if not options.gpu_requested():
        return []
    notes: list[str] = []
    live = False
    for name in ("cupti", "hsa"):  # every live one: a host may have both kinds of GPU
        configure = CONFIGURE_GPU.get(name)
        if configure is not None and _status(name)["live"]:
            notes += configure(options, settings)
            live = True
    if live:
        return notes
    if options.default_gpu:
        return []  # nobody asked: a CPU-only machine is not worth a warning
    reasons = "; ".join(f"{s['name']}: {s['reason'] or 'not live'}" for s in map(_status, ("cupti", "hsa")))
    what = "hardware counters (--pmc/--sol)" if options.counters_requested() else "GPU tracing"
    return [f"{what} requested but no GPU backend is live here ({reasons}); recording CPU-side data only"]


def _configure_sampling(options: Options, settings) -> list[str]:
    if options.sample is None:
        return []
    configure = CONFIGURE_SAMPLING.get("sampling")
    status = _status("sampling")
    if configure is None or not status["live"]:
        return [f"--sample requested but call-stack sampling is unavailable here ({status['reason'] or 'not live'})"]
    return configure(options, settings)


def _configure_metrics(options: Options, settings) -> list[str]:
    if options.process_freq is None:
        return []
    configure = CONFIGURE_METRICS.get("metrics")
    status = _status("metrics")
    if configure is None or not status["compiled"]:
        return [f"--process-freq requested but device/host metrics are unavailable here ({status['reason']})"]
    return configure(options, settings)


def _configure_collectives(options: Options, settings) -> list[str]:
    """--rccl-trace: the communication library's profiler hook (capture/nccl.py)."""
    return [n for configure in CONFIGURE_COLLECTIVES.values() for n in configure(options, settings)]


# name → configure(options, settings) -> notes. Filled by the backends' Python modules
# (rocprof/capture/<name>.py), each filling its own part of the typed settings.
CONFIGURE_GPU: dict[str, Callable] = {}
CONFIGURE_SAMPLING: dict[str, Callable] = {}
CONFIGURE_METRICS: dict[str, Callable] = {}
CONFIGURE_COLLECTIVES: dict[str, Callable] = {}


def configure(options: Options) -> tuple[_core.CaptureSettings, list[str]]:
    """The session's typed settings for every backend the options ask for, validated (a bad
    value raises ValueError in one line naming the option), and one line per request no live
    backend can serve."""
    from . import capture

    capture.load_all()
    settings = _core.CaptureSettings()
    settings.markers.start_paused = bool(options.selected_regions)
    settings.markers.kernel_rename = bool(options.kernel_rename)
    settings.markers.redact_text = bool(options.redact_text)
    notes: list[str] = []
    notes += _configure_gpu(options, settings)
    notes += _configure_sampling(options, settings)
    notes += _configure_metrics(options, settings)
    notes += _configure_collectives(options, settings)
    settings.validate()
    return settings, notes
