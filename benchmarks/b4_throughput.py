"""B4: records/s sustained through the real core and SQLite sink, against a bare
prepared-statement loop inserting the same rows (event + region per ROCTx range)
into the same schema. Side by side, alternated, median of repeats."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import rocprof
from _common import append_row
from rocprof import _core_testing  # benchmark hooks: built with the tests (make bench builds them)

N = 1_000_000
REPEATS = 3


def core_rate(d: str, i: int) -> tuple[float, int, int]:
    s = rocprof.profile(output_dir=d, output_file=f"core{i}", ring_capacity=1 << 16)
    s.start()
    t0 = time.perf_counter_ns()
    waits = _core_testing._bench_emit(N, "bench")
    rocprof._core.flush()
    t1 = time.perf_counter_ns()
    dropped = rocprof._core.dropped()
    s.stop()
    return N / ((t1 - t0) / 1e9), waits, dropped


def baseline_rate(d: str, i: int) -> float:
    ns = _core_testing._bench_baseline_insert(os.path.join(d, f"base{i}.db"), N)
    return N / (ns / 1e9)


def main() -> int:
    core, base, drops = [], [], 0
    with tempfile.TemporaryDirectory() as d:
        for i in range(REPEATS):
            rate, _, dropped = core_rate(d, i)
            core.append(rate)
            drops += dropped
            base.append(baseline_rate(d, i))
    c, b = statistics.median(core), statistics.median(base)
    print(f"B4 core + rocpd sink : {c/1e6:.2f} M records/s (runs {', '.join(f'{x/1e6:.2f}' for x in core)})")
    print(f"   bare insert loop  : {b/1e6:.2f} M records/s (runs {', '.join(f'{x/1e6:.2f}' for x in base)})")
    print(f"   ratio             : {c/b:.0%} of the baseline (goal ≥ 80%), drops {drops}")
    append_row("B4 record throughput (issue 2)",
               f"core {c/1e6:.2f} M rec/s vs bare loop {b/1e6:.2f} M rec/s = {c/b:.0%} (goal ≥80%), "
               f"drops {drops}; {N:,} ranges × {REPEATS}, median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
