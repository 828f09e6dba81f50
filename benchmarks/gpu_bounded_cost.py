"""What `--max-size` (a bounded run, docs/long-runs.md) costs per kernel over the same tracing
without it, on the GPU machine (the goal: within 0.5 µs per kernel of the default).

Each round runs tests/gpu/workloads/bounded_steps.py unprofiled, traced in full and traced
bounded, in an order that rotates every round so that a drift of the host cancels out. The cost
per kernel of a run is its median step time over the unprofiled run's of the same round, over
the kernels of a step; printed per round, with the median and quartiles over rounds of the full
and bounded costs and of their paired difference, and each run's CPU seconds (getrusage of the
child: the writer's and the keeper's work shows there, not in the step time).

  python3 benchmarks/gpu_bounded_cost.py [--rounds 6] [--steps 600] [--max-size 4MB]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = str(ROOT / "tests/gpu/workloads/bounded_steps.py")
TRACE = ("--kernel-trace", "--memory-copy-trace", "--runtime-trace")


def run(argv: list[str]) -> tuple[dict, float]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'python'}:{ROOT}"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"exit {p.returncode}: {argv}\n{p.stderr[-2000:]}")
    facts = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])
    return facts, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def quartiles(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return f"{q[1]:+.2f} [{q[0]:+.2f}, {q[2]:+.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--max-size", default="4MB")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gpu_bounded_cost_"))
    kinds = {"plain": None, "full": (), "bounded": ("--max-size", a.max_size)}
    rows = []
    kernels_per_step = None
    for r in range(a.rounds):
        order = list(kinds)[r % 3:] + list(kinds)[:r % 3]
        got = {}
        for k in order:
            wl = [WORKLOAD, "--steps", str(a.steps)]
            if kinds[k] is None:
                got[k] = run(wl)
                continue
            argv = ["-m", "rocprof", "run", "-d", str(tmp), "-o", f"{k}{r}", *TRACE, *kinds[k],
                    *wl]
            got[k] = run(argv)
            db = tmp / f"{k}{r}_results.db"
            if k == "full" and kernels_per_step is None:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                (n,) = con.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()
                con.close()
                kernels_per_step = n / a.steps  # the planted steps' extra GEMMs are 1000
            os.remove(db)
        plain = got["plain"][0]["step_ms_median"]
        cost = {k: 1e3 * (got[k][0]["step_ms_median"] - plain) / kernels_per_step
                for k in ("full", "bounded")}
        row = {"round": r, "order": order, "step_ms": {k: got[k][0]["step_ms_median"]
                                                       for k in kinds},
               "cost_us_per_kernel": cost, "bounded_minus_full": cost["bounded"] - cost["full"],
               "cpu_s": {k: round(got[k][1], 2) for k in kinds},
               "loop_thread": {k: got[k][0].get("loop_thread") for k in kinds},
               "threads_cpu_s": {k: got[k][0].get("threads_cpu_s") for k in kinds}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"kernels per step ~{kernels_per_step:.1f}; {a.rounds} rounds, {a.steps} steps each")
    for k in ("full", "bounded"):
        print(f"{k:8} µs/kernel over unprofiled: "
              f"{quartiles([r['cost_us_per_kernel'][k] for r in rows])}")
    print(f"bounded - full, paired: {quartiles([r['bounded_minus_full'] for r in rows])} µs/kernel")
    print("CPU s per run (median): " + ", ".join(
        f"{k} {statistics.median(r['cpu_s'][k] for r in rows):.2f}" for k in kinds))


if __name__ == "__main__":
    main()
