"""Device and host metrics over time (native part: cpp/capture/metrics/): Options →
``metrics.*`` settings, and what ``rocprof info`` says about each source."""

from __future__ import annotations

from .. import _core
from ..options import Options


def sources() -> list[dict]:
    """[{name, compiled, live, detail}] for NVML, AMD SMI, ROCm SMI and /proc."""
    if not hasattr(_core, "metrics_sources"):
        return []
    return [dict(name=n, compiled=c, live=lv, detail=d) for n, c, lv, d in _core.metrics_sources()]


def configure(options: Options, settings) -> list[str]:
    """Fill settings.metrics (rocprof._core.MetricsSettings) from the launcher's options."""
    m = settings.metrics
    m.hz = int(options.process_freq) if options.process_freq is not None else 0
    # --energy: a rate that resolves steps; --process-freq's when that is higher.
    m.energy_hz = max(_core.MetricsSettings.ENERGY_HZ, m.hz) if options.energy else 0
    m.gpus = options.gpus or "all"
    m.cpus = options.cpus or "all"
    # Which GPU library serves is found when the session starts (opening one here would pay
    # its initialisation twice); the native side says so there when none can.
    return []

