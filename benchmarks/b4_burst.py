"""B4 burst: 10,000,000 ROCTx-shaped ranges from 8 threads at once, as fast as the native
producers go (no waiting: an application's burst), through the real core and SQLite sink with
the default buffer budget. Reports drops (goal 0), the buffers' peak memory, how long the
producers took and the drain's throughput (all records committed / wall time), next to B4's
sustained rate measured the same way as b4_throughput.py on the same build."""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time

import rocprof
from _common import append_row
from rocprof import _core_testing  # benchmark hooks: built with the tests (make bench builds them)

THREADS = 8
N = 10_000_000
REPEATS = 3


def burst(d: str, i: int) -> tuple[float, float, int, int]:
    s = rocprof.profile(output_dir=d, output_file=f"burst{i}")
    s.start()
    per = N // THREADS
    ts = [threading.Thread(target=_core_testing._bench_emit, args=(per, f"t{k}"),
                           kwargs={"wait": False}) for k in range(THREADS)]
    t0 = time.perf_counter_ns()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    t1 = time.perf_counter_ns()
    rocprof._core.flush()
    t2 = time.perf_counter_ns()
    dropped = rocprof._core.dropped()
    peak = rocprof._core.buffer_stats()["peak_bytes"]
    written = rocprof._core.records_written()
    s.stop()
    assert written + dropped == N, (written, dropped)
    return (t1 - t0) / 1e9, N / ((t2 - t0) / 1e9), dropped, peak


def sustained(d: str, i: int, n: int = 1_000_000) -> float:
    s = rocprof.profile(output_dir=d, output_file=f"b4_{i}")
    s.start()
    t0 = time.perf_counter_ns()
    _core_testing._bench_emit(n, "bench")
    rocprof._core.flush()
    t1 = time.perf_counter_ns()
    s.stop()
    return n / ((t1 - t0) / 1e9)


def main() -> int:
    produce, drain, drops, peaks, b4 = [], [], 0, [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(REPEATS):
            p, rate, dropped, peak = burst(d, i)
            produce.append(p)
            drain.append(rate)
            drops += dropped
            peaks.append(peak)
            b4.append(sustained(d, i))
    r, s = statistics.median(drain), statistics.median(b4)
    print(f"B4 burst: {N:,} ranges from {THREADS} threads, drops {drops} (goal 0)")
    print(f"   producers took {statistics.median(produce):.2f} s, buffers peaked at "
          f"{max(peaks) / 2**20:.0f} MiB (budget {rocprof.Session().options.buffer_budget_mb} MiB)")
    print(f"   drain throughput {r/1e6:.3f} M rec/s (runs {', '.join(f'{x/1e6:.3f}' for x in drain)}); "
          f"B4 sustained on this build {s/1e6:.3f} M rec/s")
    append_row("B4 burst (issue 12)",
               f"{N:,} ranges from {THREADS} threads: drops {drops}; producers "
               f"{statistics.median(produce):.2f} s; buffer peak {max(peaks) / 2**20:.0f} MiB; "
               f"drain {r/1e6:.3f} M rec/s vs B4 sustained {s/1e6:.3f} M rec/s; median of {REPEATS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
