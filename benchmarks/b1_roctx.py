"""B1: cost of one `with roctx.range("x")` from Python, (a) recording, (b) no profiler.

ns per range = (timed loop − the same loop with an empty body) / iterations, median of
repeats. Recording runs use bursts that fit the ring, so the figure is the hot path's
cost (B4 measures what the writer sustains); drops, if any, are printed.
Side by side in the same process: contextlib.nullcontext (the floor for any Python
context manager) and torch.cuda.nvtx push/pop where CUDA is present.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time

import rocprof
import roctx
from _common import append_row, summary

N = 100_000
REPEATS = 15


def loop_empty(n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        pass
    return time.perf_counter_ns() - t0


def loop_range(n):
    rng = roctx.range
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with rng("x"):
            pass
    return time.perf_counter_ns() - t0


def loop_nullcontext(n):
    nc = contextlib.nullcontext
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with nc():
            pass
    return time.perf_counter_ns() - t0


def loop_nvtx(n):
    import torch

    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    t0 = time.perf_counter_ns()
    for _ in range(n):
        push("x")
        pop()
    return time.perf_counter_ns() - t0


def per_op(fn, flush=None):
    out = []
    for _ in range(REPEATS):
        empty = loop_empty(N)
        out.append((fn(N) - empty) / N)
        if flush:
            flush()
    return out


def main() -> int:
    idle = per_op(loop_range)
    null = per_op(loop_nullcontext)
    nvtx = None
    try:
        import torch

        if torch.cuda.is_available():
            nvtx = per_op(loop_nvtx)
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as d:
        s = rocprof.profile(output_dir=d, output_file="b1", ring_capacity=1 << 17)
        s.start()
        rec = per_op(loop_range, flush=rocprof._core.flush)
        dropped = rocprof._core.dropped()
        s.stop()
    print(f"B1 roctx.range, recording     : {summary(rec)} ns/range  (goal ≤ 250), drops {dropped}")
    print(f"B1 roctx.range, no profiler   : {summary(idle)} ns/range  (goal ≤ 80)")
    print(f"   contextlib.nullcontext     : {summary(null)} ns/range  (floor for any context manager)")
    if nvtx:
        print(f"   torch.cuda.nvtx push+pop   : {summary(nvtx)} ns/pair")
    row = (f"recording {sorted(rec)[len(rec)//2]:.0f} ns/range (goal ≤250, drops {dropped}); "
           f"no profiler {sorted(idle)[len(idle)//2]:.0f} ns (goal ≤80); "
           f"nullcontext {sorted(null)[len(null)//2]:.0f} ns"
           + (f"; nvtx push+pop {sorted(nvtx)[len(nvtx)//2]:.0f} ns" if nvtx else "")
           + f"; Python {sys.version.split()[0]}, median of {REPEATS}×{N}")
    append_row("B1 roctx cost (issue 2)", row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
