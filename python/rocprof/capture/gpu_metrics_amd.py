"""AMD GPU metrics over time (--gpu-metrics) through rocprofiler-sdk's device counting service
(native part: cpp/capture/rocprofiler_sdk/device_counting*): the settings, and the environment
that makes rocprofiler-sdk load rocprof's tool, as for AMD PC sampling
(rocprof.capture.pc_sampling_amd): the service can only be configured inside the SDK's tool
initialize, when the program first starts the HSA runtime.

Compiled only where the rocprofiler-sdk headers are (ROCm 6.4+); never run on AMD hardware:
tested through a test-only stand-in of the SDK's calls (test_device_counting.cpp).
"""

from __future__ import annotations

import os

from .._libs import already_mapped
from ..options import Options
from . import gpu_metrics, pc_sampling_amd

UNRUN = "never run on AMD hardware"


def configure(options: Options, settings) -> list[str]:
    """Fill settings.gpu_metrics and set the tool's environment."""
    gpu_metrics.fill(options, settings)
    notes = []
    variable = pc_sampling_amd.VARIABLE
    if already_mapped("libhsa-runtime64") and \
            pc_sampling_amd.TOOL_LIBRARY not in os.environ.get(variable, ""):
        notes.append("the HSA runtime was loaded before profiling started, so rocprofiler-sdk "
                     "cannot load rocprof's tool and AMD GPUs get no --gpu-metrics: run under "
                     f"`rocprof run`, or set {variable}={pc_sampling_amd.tool_path()} before "
                     "the program first uses the GPU")
    os.environ.update(pc_sampling_amd.tool_environment())
    return notes


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """A command's processes load our tool through rocprofiler-sdk's variable."""
    variable, tool = pc_sampling_amd.VARIABLE, pc_sampling_amd.TOOL_LIBRARY
    if settings.gpu_metrics.hz > 0 and tool in os.environ.get(variable, ""):
        env.update(pc_sampling_amd.tool_environment(env))
    return []


def reason() -> str:
    """Why this build has no AMD GPU metrics sampler (rocprof info)."""
    return ("no rocprofiler-sdk headers at build time (it is compiled where they "
            "are: ROCm 6.4+ in /opt/rocm, or cmake -DROCPROF_ROCPROFILER_SDK_INCLUDE_DIR=...; "
            f"make sdk-compile-check SDK_INCLUDE=DIR checks it); {UNRUN}")
