"""B6: rocpd kernel summary over 1M and 10M dispatch rows, and over 16 rank databases x 1M rows.

Databases are built by rocprof's own writer (rocpd.testing) in a scratch directory, then
``rocpd.connect(...).kernel_stats()`` is timed (median of repeats, spread printed), with the CPU
seconds it used (this process and its workers) and the 1-minute load average, since a shared box's
wall times say little on their own. Usage:
    PYTHONPATH=. python3 benchmarks/b6_analysis_speed.py [--dir /tmp/b6] [--repeats 3] [--append]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import time

from rocpd.testing import DatabaseBuilder

NAMES = [f"kernel_{i:03d}_gemm_tile" for i in range(200)]


def build(path: str, rows: int, seed: int, pid: int = 1000, rank: int | None = None) -> str:
    if os.path.exists(path):
        return path
    rng = random.Random(seed)
    if os.path.exists(path + ".tmp"):
        os.unlink(path + ".tmp")
    b = DatabaseBuilder(path + ".tmp", pid=pid, rank=rank)
    t, chunk = 0, 200_000
    for lo in range(0, rows, chunk):
        batch = []
        for _ in range(min(chunk, rows - lo)):
            d = rng.randrange(1_000, 200_000)
            batch.append((NAMES[rng.randrange(len(NAMES))], t, t + d))
            t += d + 500
        b.kernels_bulk(batch)
    b.close()
    os.replace(path + ".tmp", path)
    return path


def _cpu() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def timed(fn, repeats: int):
    out, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), _cpu()
        fn()
        out.append(time.perf_counter() - t0)
        cpu.append(_cpu() - c0)
    return statistics.median(out), min(out), max(out), statistics.median(cpu)


def summary_of(paths):
    import rocpd

    def run():
        with rocpd.connect(*paths) as db:
            df = db.kernel_stats()
            assert int(df["Calls"].sum()) > 0
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/b6")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--append", action="store_true", help="append a row to benchmarks/RESULTS.md")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    one = build(os.path.join(args.dir, "k1m.db"), 1_000_000, 1)
    ten = build(os.path.join(args.dir, "k10m.db"), 10_000_000, 10)
    ranks = [build(os.path.join(args.dir, f"rank{r:02d}.db"), 1_000_000, 100 + r, pid=5000 + r, rank=r)
             for r in range(16)]
    load0 = os.getloadavg()[0]
    res = {
        "1M": timed(summary_of([one]), args.repeats),
        "10M": timed(summary_of([ten]), args.repeats),
        "16x1M": timed(summary_of(ranks), args.repeats),
    }
    load1 = os.getloadavg()[0]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for k, (med, lo, hi, cpu) in res.items():
        print(f"B6 {k}: median {med:.2f} s (min {lo:.2f}, max {hi:.2f}, n={args.repeats}), "
              f"CPU {cpu:.2f} s")
    print(f"load average (1 min) before/after: {load0:.1f}/{load1:.1f} on {cores} cores")
    if args.append:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        path = os.path.join(os.path.dirname(__file__), "RESULTS.md")
        row = (f"| {time.strftime('%Y-%m-%d')} | {cores}-core CPU box, load {load0:.1f}/{load1:.1f}"
               f" | {commit} | "
               + " | ".join(f"{m:.2f} s ({lo:.2f}–{hi:.2f}), CPU {c:.1f} s" for m, lo, hi, c in res.values())
               + f" | {'met' if res['10M'][0] <= 3 and res['16x1M'][0] <= 10 else 'MISSED'} |\n")
        print(row, end="")
        with open(path, "a") as fh:
            fh.write(row)


if __name__ == "__main__":
    main()
