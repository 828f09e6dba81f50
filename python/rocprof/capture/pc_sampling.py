"""PC sampling's settings (rocprof._core.PcSamplingSettings), the same for every PC sampler:
NVIDIA's (capture/cupti/, configured by rocprof.capture.cupti) and AMD's
(capture/rocprofiler_sdk/, rocprof.capture.pc_sampling_amd)."""

from __future__ import annotations

from ..options import Options


def fill(options: Options, settings) -> None:
    """settings.pc_sampling from the run's --pc-sampling-* options (rocprofv3's names)."""
    if not options.pc_sampling:
        return
    pc = settings.pc_sampling
    pc.enabled = True
    pc.method = options.pc_sampling_method
    pc.unit = options.pc_sampling_unit
    pc.interval = options.pc_sampling_interval
