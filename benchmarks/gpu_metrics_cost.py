"""What `--gpu-metrics` (CUPTI PM sampling at its default 5 kHz) costs a training step, on the
GPU machine (the issue's goal: <= 2 % of step time on the transformer and CNN workloads).

One process runs sessions back to back on warmed-up workloads (benchmarks/gpu_launch_cost.py's
transformer and CNN steps, gpu_energy_cost.py's bf16 GEMM step), alternating a session without
and with --gpu-metrics, order reversed every other round so that a drift cancels out; kernel
tracing is on in both. Each session first runs steps for 1.5 s (the sampler's set-up on the
session's first driver call), then the timed steps. Reported per workload: the median over rounds
of (with - without) / without of the step time (the fastest of 8 batches) with quartiles, the CPU
time of threads other than the launching one per second (the decoding thread's), the samples
per second the sampler achieved (its metadata), and the launching thread's own CPU time and
context switches over the timed steps (launcher()).

  [GPU_METRICS_COST_FLAGS=...] python3 benchmarks/gpu_metrics_cost.py [--rounds 4] [--steps 300]
      [--json FILE] [--pin CPU]
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from gpu_energy_cost import Gemm, alternate, cells, gpu_main, paired, quartiles, sessions  # noqa: E402
from gpu_launch_cost import Workload  # noqa: E402  (sets sys.path for rocprof)

# The "with" session's flags; GPU_METRICS_COST_FLAGS replaces them: another rate
# ("--gpu-metrics=true --gpu-metrics-frequency=1000"), or "" for an A/A run (both sessions alike:
# the spread a real cost has to stand out of).
FLAGS = os.environ.get("GPU_METRICS_COST_FLAGS", "--gpu-metrics=true").split()


def achieved(db: str) -> float:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT value FROM rocpd_metadata WHERE tag = "
                          "'rocprof.gpu_metrics.achieved_hz.gpu0'").fetchone()
        return float(row[0]) if row else 0.0
    except sqlite3.Error:
        return 0.0
    finally:
        con.close()


def measure(rounds: int, steps: int) -> dict:
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    loads = [Workload("transformer", 0, steps), Workload("cnn", 0, steps),
             Gemm(max(4, steps * 3 // 4))]
    res = {w.name: {"without": [], "with": []} for w in loads}

    def argv_of(label):
        return ["--kernel-trace=true", *(FLAGS if label == "with" else [])]

    for label, w, m, db in sessions(loads, alternate("without", "with"), argv_of, rounds,
                                    "gpu_metrics_cost_"):
        m["hz"] = achieved(db)
        res[w.name][label].append(m)
    return res


def launcher(off: list, on: list) -> str:
    """The launching thread's own CPU over the timed steps, round by round: the relative
    change's median [quartiles], and its context switches (voluntary / involuntary) without ->
    with. A launch-bound step is this thread's work: a sampler that took its core or a lock it
    needs shows here, whatever the host's spread of step times between sessions."""
    if not all("self_cpu" in m for m in off + on):
        return "— | —"
    q1, med, q3 = quartiles([(b["self_cpu"] - a["self_cpu"]) / a["self_cpu"] * 100
                             for a, b in zip(off, on, strict=True)])

    def switches(ms):
        return (f"{statistics.median(m['vcsw'] for m in ms):,.0f} / "
                f"{statistics.median(m['ivcsw'] for m in ms):,.0f}")
    return f"{med:+.2f} % [{q1:+.2f}, {q3:+.2f}] | {switches(off)} -> {switches(on)}"


def report(res: dict) -> None:
    print("| workload | step (without) | added by --gpu-metrics: median [q1, q3] | "
          "other threads' CPU, ms/s (without -> with) | samples/s achieved | "
          "launching thread's CPU: change | its context switches, vol / invol |")
    print("|---|---|---|---|---|---|---|")
    for name, by in res.items():
        hz = statistics.median(b["hz"] for b in by["with"])
        print(f"| {name} | {cells(paired(by['without'], by['with']))} | {hz:,.0f} | "
              f"{launcher(by['without'], by['with'])} |")


if __name__ == "__main__":
    sys.exit(gpu_main("gpu_metrics_cost", __doc__, measure, report, rounds=4, steps=300))
