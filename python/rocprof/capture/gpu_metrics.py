"""GPU hardware metrics over time (rocprof._core.GpuMetricsSettings): --gpu-metrics and its
options into the settings the GPU metrics samplers read (NVIDIA: CUPTI's PM sampling, started
by the CUPTI backend, capture/cupti/pm_sampling.*)."""

from __future__ import annotations

from .. import _core
from ..options import Options


def fill(options: Options, settings) -> None:
    """settings.gpu_metrics from the run's --gpu-metrics* options (any of them turns it on); a
    bad rate raises ValueError in one line naming the option."""
    if not (options.gpu_metrics or options.gpu_metrics_frequency is not None
            or options.gpu_metrics_set is not None):
        return
    g = settings.gpu_metrics
    hz = options.gpu_metrics_frequency
    top = _core.GpuMetricsSettings.MAX_HZ
    if hz is not None and not 1 <= hz <= top:
        raise ValueError(f"--gpu-metrics-frequency must be between 1 and {top} Hz, not {hz}")
    g.hz = hz if hz is not None else _core.GpuMetricsSettings.DEFAULT_HZ
    g.set = options.gpu_metrics_set or "default"
