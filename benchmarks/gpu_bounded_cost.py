"""What `--max-size` (a bounded run, docs/long-runs.md) costs a step over the same tracing
without it, on the GPU machine (the goal: within 0.5 µs per kernel of the default).

Whole processes differ by several µs per kernel on the GPU host from one start to the next, more
than the cost sought; so one process runs sessions back to back on warmed-up workloads
(benchmarks/gpu_launch_cost.py's transformer and CNN training steps, each step a ROCTx range
"step", as a bounded run finds its steps), alternating a session with the default tracing
(`--kernel-trace --memory-copy-trace --runtime-trace`) and one with `--max-size` added, the order
reversed every other round. Each session runs steps for 1.5 s before its timed steps (the keeper
has decided its first steps by then). Reported per workload: the median over rounds of the
step-time change with quartiles, the same per kernel (the change over the kernels of a step,
counted in the first traced session), and the other threads' CPU (the writer's and keeper's).

  python3 benchmarks/gpu_bounded_cost.py [--rounds 8] [--steps 300] [--json FILE]
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from gpu_energy_cost import alternate, cells, gpu_main, paired, sessions  # noqa: E402
from gpu_launch_cost import Workload  # noqa: E402  (sets sys.path for rocprof)

TRACE = ["--kernel-trace=true", "--memory-copy-trace=true", "--runtime-trace=true"]
MAX_SIZE = "4MB"


class Stepped(Workload):
    """A training workload whose every step is a ROCTx range "step"."""

    def run(self, n):
        import roctx

        for _ in range(n):
            with roctx.range("step"):
                self.step_fn(self.model, self.opt, *self.inp)


def kernels_per_step(db: str) -> float:
    """Kernels over ROCTx "step" ranges in a traced session's database."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (k,) = con.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()
        (n,) = con.execute("SELECT count(*) FROM regions WHERE "
                           "json_extract(extdata, '$.message') = 'step'").fetchone()
        return k / n if n else 0.0
    finally:
        con.close()


def measure(rounds: int, steps: int) -> dict:
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    loads = [Stepped("transformer", 0, steps), Stepped("cnn", 0, steps)]
    res = {w.name: {"default": [], "bounded": [], "kernels_per_step": 0.0} for w in loads}

    def argv_of(label):
        return [*TRACE, *(["--max-size", MAX_SIZE] if label == "bounded" else [])]

    for label, w, m, db in sessions(loads, alternate("default", "bounded"), argv_of, rounds,
                                    "gpu_bounded_cost_"):
        res[w.name][label].append(m)
        if label == "default" and not res[w.name]["kernels_per_step"]:
            res[w.name]["kernels_per_step"] = kernels_per_step(db)
        res[w.name]["steps"] = w.units
    return res


def report(res: dict) -> None:
    print("| workload | step (default) | added by --max-size: median [q1, q3] | other threads' "
          "CPU, ms/s (default -> bounded) | kernels/step | µs per kernel: median [q1, q3] |")
    print("|---|---|---|---|---|---|")
    for name, by in res.items():
        f = paired(by["default"], by["bounded"])
        k = by["kernels_per_step"]
        us = [(b["best"] - a["best"]) / by["steps"] * 1e6 / k
              for a, b in zip(by["default"], by["bounded"], strict=True)]
        q = statistics.quantiles(us, n=4) if len(us) > 1 else us * 3
        print(f"| {name} | {cells(f)} | {k:.0f} | {q[1]:+.2f} [{q[0]:+.2f}, {q[2]:+.2f}] |")


if __name__ == "__main__":
    sys.exit(gpu_main("gpu_bounded_cost", __doc__, measure, report, rounds=8, steps=300))
