"""B1: cost of one `with roctx.range("x")` from Python, (a) recording, (b) no profiler.

ns per range = (timed loop − the same loop with an empty body) / iterations, median of
repeats. Recording runs use bursts that fit the ring, so the figure is the hot path's
cost (B4 measures what the writer sustains); drops, if any, are printed.
Side by side in the same process: contextlib.nullcontext (the floor for any Python
context manager), torch.cuda.nvtx push/pop where CUDA is present, and everywhere a stand-in for
it (rocprof._core_testing: torch's shape, a pybind11 function per call behind a Python wrapper,
into NVTX with no tool attached). The goals are ratios to nvtx (recording ≤ 0.25×, no profiler
≤ 0.1×); where CUDA is absent they are printed against the stand-in, named as such.
Where a recorded range's time goes: the same push/pop made from C (no Python between them),
how ranges are stamped (the CPU's counter where the kernel trusts it as a clocksource, else two
CLOCK_BOOTTIME reads) and what one CLOCK_BOOTTIME read costs.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time

import rocprof
import roctx
from _common import append_row, summary
from rocprof import _core_testing  # benchmark hooks: built with the tests (make bench builds them)

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


# torch.cuda.nvtx's two functions, as torch writes them, over the stand-in binding.
def _stand_in_range_push(msg):
    return _core_testing._nvtx_stand_in_push(msg)


def _stand_in_range_pop():
    return _core_testing._nvtx_stand_in_pop()


def loop_nvtx_stand_in(n):
    push, pop = _stand_in_range_push, _stand_in_range_pop
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


def native_and_clock():
    """ns per push/pop pair made from C, and per clock read (inside a session)."""
    nat, clk = [], []
    for _ in range(REPEATS):
        nat.append(_core_testing._bench_native_ranges(N) / N)
        rocprof._core.flush()
        clk.append(_core_testing._bench_clock_reads(N) / N)
    return nat, clk


def clocksource() -> str:
    """The kernel's clocksource and the others it offers (the counter is trusted where tsc is
    among them)."""
    base = "/sys/devices/system/clocksource/clocksource0/"
    try:
        with open(base + "current_clocksource") as f:
            current = f.read().strip()
        with open(base + "available_clocksource") as f:
            available = f.read().split()
    except OSError:
        return "unknown"
    others = [c for c in available if c != current]
    return current + (f", also {' '.join(others)}" if others else "")


def median(values):
    return sorted(values)[len(values) // 2]


def main() -> int:
    idle = per_op(loop_range)
    null = per_op(loop_nullcontext)
    stand_in = per_op(loop_nvtx_stand_in)
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
        nat, clk = native_and_clock()
        dropped = rocprof._core.dropped()
        s.stop()
    print(f"B1 roctx.range, recording     : {summary(rec)} ns/range, drops {dropped}")
    print(f"B1 roctx.range, no profiler   : {summary(idle)} ns/range")
    print(f"   contextlib.nullcontext     : {summary(null)} ns/range  (floor for any context manager)")
    if nvtx:
        print(f"   torch.cuda.nvtx push+pop   : {summary(nvtx)} ns/pair")
        print(f"B1 ratios to nvtx (medians)   : recording {median(rec) / median(nvtx):.2f}× (goal ≤ 0.25), "
              f"no profiler {median(idle) / median(nvtx):.2f}× (goal ≤ 0.1)")
    else:
        print("   torch.cuda.nvtx            : not here (no CUDA); the goals are ratios to it")
    print(f"   nvtx stand-in push+pop     : {summary(stand_in)} ns/pair  (pybind11 + Python wrapper, "
          f"no NVTX tool: torch.cuda.nvtx's shape)")
    print(f"B1 ratios to the stand-in     : recording {median(rec) / median(stand_in):.2f}×, "
          f"no profiler {median(idle) / median(stand_in):.2f}×"
          + ("" if nvtx else "  (no CUDA here: the goals' yardstick stood in for)"))
    print(f"   ratios to nullcontext      : recording {median(rec) / median(null):.2f}×, "
          f"no profiler {median(idle) / median(null):.2f}×")
    stamps = "the CPU's counter" if _core_testing._tsc_stamps() else "CLOCK_BOOTTIME reads"
    print(f"   where recording goes       : push+pop from C {median(nat):.1f} ns, stamped with "
          f"{stamps} (clocksource {clocksource()}; one CLOCK_BOOTTIME read {median(clk):.1f} ns); "
          f"the rest is Python's `with`")
    row = (f"recording {median(rec):.0f} ns/range (drops {dropped}); no profiler {median(idle):.0f} ns; "
           f"nullcontext {median(null):.0f} ns"
           + (f"; nvtx push+pop {median(nvtx):.0f} ns: {median(rec) / median(nvtx):.2f}× / "
              f"{median(idle) / median(nvtx):.2f}× (goal ≤ 0.25 / ≤ 0.1)" if nvtx else "")
           + f"; nvtx stand-in {median(stand_in):.0f} ns: {median(rec) / median(stand_in):.2f}× / "
             f"{median(idle) / median(stand_in):.2f}×"
           + f"; push+pop from C {median(nat):.0f} ns ({stamps}), CLOCK_BOOTTIME read "
             f"{median(clk):.1f} ns ({clocksource()})"
           + f"; Python {sys.version.split()[0]}, median of {REPEATS}×{N}")
    append_row("B1 roctx cost (issue 2)", row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
