"""Synthetic runs with a known power profile for the energy tests: each step a GEMM phase at
500 W (kernels back to back), a sleep phase at 100 W (no work) and a copy phase at 250 W
(copies), each in its ROCTx range inside a "train_step" range; the device at 100 W before and
after. The device's energy counter updates every 50 ms (off the phases' grid) and is read at
100 Hz, so most readings repeat a stale value; or only its power is read."""

from __future__ import annotations

import numpy as np

from rocpd.testing import DatabaseBuilder
from rocpd.testing.metrics import add_metric_samples

MS = 1_000_000
T0 = 1_000_000_000_000
LEAD = 300 * MS           # idle before the first step and after the last
PHASE = 400 * MS
STEPS = 3
PHASES = (("gemm", 500.0), ("sleep", 100.0), ("copy", 250.0))
IDLE_W = 100.0
PERIOD = 50 * MS
READ_EVERY = 10 * MS


def phases(steps: int = STEPS):
    """(name, start, end, watts) of every phase, in time order."""
    out = []
    t = T0 + LEAD
    for _ in range(steps):
        for name, w in PHASES:
            out.append((name, t, t + PHASE, w))
            t += PHASE
    return out


def end_of_run(steps: int = STEPS) -> int:
    return T0 + LEAD + steps * len(PHASES) * PHASE + LEAD


def true_energy(t, steps: int = STEPS, scale: float = 1.0) -> np.ndarray:
    """Joules from T0 to each time ``t`` of the profile (``scale``: each phase's power above
    idle multiplied by it)."""
    t = np.asarray(t, dtype=np.float64)
    out = (t - T0) / 1e9 * IDLE_W
    for _, s, e, w in phases(steps):
        out += np.clip(t - s, 0, e - s) / 1e9 * (w - IDLE_W) * scale
    return out


def counter_readings(steps: int = STEPS, offset: int = 7 * MS, stale_repeat: bool = True,
                     scale: float = 1.0):
    """(time, counter J) read every READ_EVERY; the counter updates every PERIOD from T0 +
    ``offset`` (without ``stale_repeat``: it updates at every reading)."""
    reads = np.arange(T0 + 3 * MS, end_of_run(steps), READ_EVERY)
    if not stale_repeat:
        return list(zip(reads.tolist(), (1000.0 + true_energy(reads, steps, scale)).tolist(), strict=True))
    last_update = T0 + offset + ((reads - T0 - offset) // PERIOD) * PERIOD
    return list(zip(reads.tolist(), (1000.0 + true_energy(last_update, steps, scale)).tolist(), strict=True))


def power_readings(steps: int = STEPS):
    """(time, W) read every READ_EVERY: the power at that moment."""
    reads = np.arange(T0 + 3 * MS, end_of_run(steps), READ_EVERY)
    w = np.full(reads.size, IDLE_W)
    for _, s, e, watts in phases(steps):
        w[(reads >= s) & (reads < e)] = watts
    return list(zip(reads.tolist(), w.tolist(), strict=True))


def build(path, source: str = "counter", steps: int = STEPS, period_metadata: bool = True,
          overlap: bool = False, stale_repeat: bool = True, scale: float = 1.0) -> str:
    """The run's database at ``path``; ``source``: "counter", "power" or "none" (no samples).
    ``overlap``: each GEMM phase runs two kernels side by side ("gemm_a" over the whole phase,
    "gemm_b" over its second half) instead of kernels back to back. ``scale``: the counter's power above idle
    multiplied by it (the same work, hungrier)."""
    path = str(path)
    with DatabaseBuilder(path, gpus=1) as b:
        t = T0 + LEAD
        for k in range(steps):
            b.marker(f"train_step {k}", t, t + len(PHASES) * PHASE)
            t += len(PHASES) * PHASE
        for name, s, e, _ in phases(steps):
            b.marker(name, s, e)
            if name == "gemm" and overlap:
                b.kernel("gemm_a", s, e, site=("train.py", 10, "step"))
                b.kernel("gemm_b", s + PHASE // 2, e, site=("train.py", 11, "step"))
            elif name == "gemm":
                for i in range(8):
                    b.kernel("gemm_bf16", s + i * PHASE // 8, s + (i + 1) * PHASE // 8,
                             site=("train.py", 10, "step"))
            elif name == "copy":
                for i in range(4):
                    b.memory_copy("MEMORY_COPY_DEVICE_TO_DEVICE", s + i * PHASE // 4,
                                  s + (i + 1) * PHASE // 4, 1 << 30, src_agent=2, dst_agent=2,
                                  site=("train.py", 20, "step"))
        if source == "counter" and period_metadata:
            b.metadata("rocprof.energy.period_ns.gpu0", PERIOD)
        if source != "none":
            b.metadata("rocprof.energy.source.gpu0", source)
    if source == "counter":
        add_metric_samples(path, "device_energy", "J", counter_readings(steps, stale_repeat=stale_repeat, scale=scale))
    if source in ("counter", "power"):
        add_metric_samples(path, "device_power", "W", power_readings(steps))
    if source == "none":
        add_metric_samples(path, "device_busy_gfx", "%", [(T0, 0.0), (T0 + MS, 50.0)])
    return path
