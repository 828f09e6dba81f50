"""Regression guard for B1 (the cost of a recorded `with roctx.range(...)`), the one kind of
timing check the test suite has: a same-run ratio against contextlib.nullcontext, generous
enough for a loaded 2-core CI box, tight enough that a doubling of the hot path fails.

Both loops run interleaved in short bursts and each side keeps its fastest burst (a burst
that lost the CPU to another process is just slower, never faster). The goal figures, against
torch.cuda.nvtx on the GPU host, are benchmarks/b1_roctx.py's.
"""

from __future__ import annotations

import contextlib
import time

import rocprof
import roctx

N = 20_000
BURSTS = 25
# Recording measured 0.37-0.44x of nullcontext per loop iteration on the CPU box (Python 3.11,
# loop overhead included on both sides); twice its hot path is 0.7-0.8x.
MAX_RATIO = 0.6


def _ranges(n):
    rng = roctx.range
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with rng("guard"):
            pass
    return time.perf_counter_ns() - t0


def _nullcontexts(n):
    nc = contextlib.nullcontext
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with nc():
            pass
    return time.perf_counter_ns() - t0


def test_recording_a_range_costs_well_under_a_nullcontext(tmp_path):
    s = rocprof.profile(output_dir=str(tmp_path), output_file="guard")
    s.start()
    try:
        recording, null = [], []
        for _ in range(BURSTS):
            null.append(_nullcontexts(N))
            recording.append(_ranges(N))
            rocprof._core.flush()  # the writer drains between bursts, not during the next one
        dropped = rocprof._core.dropped()
    finally:
        s.stop()
    ratio = min(recording) / min(null)
    assert dropped == 0
    assert ratio <= MAX_RATIO, (
        f"regression guard B1: a recorded roctx.range costs {min(recording) / N:.0f} ns per "
        f"loop iteration, {ratio:.2f}x contextlib.nullcontext's {min(null) / N:.0f} ns "
        f"(limit {MAX_RATIO}x); run benchmarks/b1_roctx.py to see where the time goes")
