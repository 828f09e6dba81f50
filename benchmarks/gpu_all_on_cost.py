"""What the capture sources of a long training run cost together, on the GPU machine: kernel,
copy and API tracing with GPU memory (`--sys-trace`: the runtime's allocations and PyTorch's
allocator events), the GPU metrics sampler (`--gpu-metrics`) and the energy reader (`--energy`)
all on, and what each of the three new sources adds with the others already on (their issues'
budgets: metrics <= 2 %, energy <= 0.5 %, memory <= 3 % of step time).

One process runs sessions back to back on warmed-up workloads (gpu_launch_cost.py's transformer
and CNN steps, gpu_energy_cost.py's bf16 GEMM step), in each round one session per label, the
order reversed every other round so that a drift cancels out:

  sys-trace        --sys-trace alone (the base)
  all              --sys-trace --gpu-metrics --energy
  all-metrics      all but --gpu-metrics   (all against it: what the metrics sampler adds)
  all-energy       all but --energy
  all-memory       all but memory: --sys-trace's other parts named one by one

Reported per workload: the median over rounds of the relative change of step time (the
fastest of 8 batches) with quartiles, and the CPU of threads other than the launching one.
--pin CPU puts the launching thread alone on one CPU during the timed steps.

  python3 benchmarks/gpu_all_on_cost.py [--rounds 6] [--steps 300] [--json FILE] [--pin CPU]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from gpu_energy_cost import Gemm, alternate, cells, gpu_main, paired, sessions  # noqa: E402
from gpu_launch_cost import Workload  # noqa: E402  (sets sys.path for rocprof)

SOURCES = {"metrics": ["--gpu-metrics=true"], "energy": ["--energy=true"]}
# --sys-trace without --memory-allocation-trace, as its parts (the AMD-only ones left out).
SYS_BUT_MEMORY = ["--kernel-trace=true", "--memory-copy-trace=true", "--runtime-trace=true",
                  "--rccl-trace=true"]
LABELS = ("sys-trace", "all", "all-metrics", "all-energy", "all-memory")


def argv_of(label: str) -> list[str]:
    if label == "sys-trace":
        return ["--sys-trace=true"]
    left_out = label.removeprefix("all").removeprefix("-")
    base = SYS_BUT_MEMORY if left_out == "memory" else ["--sys-trace=true"]
    return [*base, *(f for k, fs in SOURCES.items() if k != left_out for f in fs)]


def measure(rounds: int, steps: int) -> dict:
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    loads = [Workload("transformer", 0, steps), Workload("cnn", 0, steps),
             Gemm(max(4, steps * 3 // 4))]
    res = {w.name: {lab: [] for lab in LABELS} for w in loads}
    for label, w, m, _db in sessions(loads, alternate(*LABELS), argv_of, rounds, "all_on_cost_"):
        res[w.name][label].append(m)
    return res


def report(res: dict) -> None:
    print("| workload | what | step (base) | added: median [q1, q3] | "
          "other threads' CPU, ms/s (base -> with) |")
    print("|---|---|---|---|---|")
    for name, by in res.items():
        print(f"| {name} | everything on, over --sys-trace | {cells(paired(by['sys-trace'], by['all']))} |")
        for k in (*SOURCES, "memory"):
            print(f"| {name} | {k}, the others on | {cells(paired(by[f'all-{k}'], by['all']))} |")


if __name__ == "__main__":
    sys.exit(gpu_main("gpu_all_on_cost", __doc__, measure, report, rounds=6, steps=300))
