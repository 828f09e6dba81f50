"""Synthetic runs with GPU hardware metrics over time (as `rocprof run --gpu-metrics` stores
them: tracks "pm_<key> [0]" of category cupti_pm_sampling, a value only where it changed, the
last again at the end): per step a GEMM phase (8 kernels back to back, tensor pipes 80 % busy,
DRAM 10 %, 200 GB/s) and a copy phase (4 copies, tensor 0 %, DRAM 90 %, 3000 GB/s), each in its
ROCTx range inside "train_step k"; the GPU idle (all 0) before, between and after. Sampled
every 100 µs."""

from __future__ import annotations

from rocpd.testing import DatabaseBuilder
from rocpd.testing.metrics import add_metric_samples

US = 1_000
MS = 1_000_000
T0 = 1_000_000_000_000
LEAD = 50 * MS
PHASE = 40 * MS
PERIOD = 100 * US
STEPS = 2
# key: (gemm value, copy value, units)
VALUES = {
    "pm_tensor_active": (80.0, 0.0, "%"),
    "pm_sm_active": (95.0, 60.0, "%"),
    "pm_dram_read": (6.0, 45.0, "%"),
    "pm_dram_write": (4.0, 45.0, "%"),
    "pm_dram_read_bytes": (120e9, 1500e9, "B/s"),
    "pm_dram_write_bytes": (80e9, 1500e9, "B/s"),
}


def phases(steps: int = STEPS):
    out, t = [], T0 + LEAD
    for _ in range(steps):
        out += [("gemm", t, t + PHASE), ("copy", t + PHASE, t + 2 * PHASE)]
        t += 2 * PHASE + 10 * MS  # an idle gap between steps
    return out


def end_of_run(steps: int = STEPS) -> int:
    return phases(steps)[-1][2] + LEAD


def readings(key: str, steps: int = STEPS, dedup: bool = True, tensor_gemm: float | None = None):
    """(t, value) every PERIOD, only where the value changes (and the last at the end);
    ``tensor_gemm``: the GEMM phase's tensor activity instead of VALUES'."""
    gemm, copy, _ = VALUES[key]
    if key == "pm_tensor_active" and tensor_gemm is not None:
        gemm = tensor_gemm
    out, last = [], None
    t = T0
    spans = phases(steps)
    while t < end_of_run(steps):
        v = next((gemm if n == "gemm" else copy for n, s, e in spans if s <= t < e), 0.0)
        if not dedup or v != last:
            out.append((t, v))
            last = v
        t += PERIOD
    out.append((t, last))  # the end of the last sample
    return out


def build(path, steps: int = STEPS, dedup: bool = True, name: str = "NVIDIA H200",
          tensor_gemm: float | None = None, component: str = "cupti_pm_sampling") -> str:
    """``component``: the sampler's (AMD's device counting service writes the same tracks as
    rocprofiler_sdk_device_counting)."""
    path = str(path)
    with DatabaseBuilder(path, gpus=1) as b:
        b.gpu(0, name=name)
        for k, (_, s, _) in enumerate(phases(steps)[::2]):
            b.marker(f"train_step {k}", s, s + 2 * PHASE)
        for n, s, e in phases(steps):
            b.marker(n, s, e)
            if n == "gemm":
                for i in range(8):
                    b.kernel("gemm_bf16", s + i * PHASE // 8, s + (i + 1) * PHASE // 8,
                             site=("train.py", 10, "step"))
            else:
                for i in range(4):
                    b.memory_copy("MEMORY_COPY_DEVICE_TO_DEVICE", s + i * PHASE // 4,
                                  s + (i + 1) * PHASE // 4, 1 << 30, src_agent=2, dst_agent=2,
                                  site=("train.py", 20, "step"))
    for key, (_, _, units) in VALUES.items():
        add_metric_samples(path, key, units, readings(key, steps, dedup, tensor_gemm),
                           category=component, component=component)
    return path
