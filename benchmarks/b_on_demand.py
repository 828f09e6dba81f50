"""Idle cost of `rocprof run --on-demand`: a CPU workload (pure Python arithmetic with a ROCTx
range per step, as a serving loop annotated for windows would be) and, where PyTorch sees a
CUDA GPU, a GPU serving loop (a small MLP's forward pass per step, synchronised), each run plain
and under --on-demand with no window started, alternated in one run, REPEATS times each.

The workload times each step of its own loop (the figure excludes interpreter and launcher
start-up, which B7 measures) and reports the median step: a whole-loop time carries the GPU's
clock changes and the host's hiccups, which spread pairs of runs by +-30 % on the H100 host.
The ratio on-demand/plain of median steps, median over alternated pairs, is the idle overhead,
goal within noise (<= 1 %).
    python benchmarks/b_on_demand.py [--record]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, append_row, summary

REPEATS = int(os.environ.get("ROCPROF_BENCH_REPEATS", "5"))  # pairs; more for a tighter median
WORKLOAD = """
import sys, time
try:
    import roctx
except ImportError:
    roctx = None
steps, work = int(sys.argv[1]), int(sys.argv[2])
clock = time.perf_counter_ns
times = []
acc = 0
for i in range(steps):
    t0 = clock()
    if roctx is not None:
        roctx.push("step")
    for j in range(work):
        acc += j * j % 7
    if roctx is not None:
        roctx.pop()
    times.append(clock() - t0)
times.sort()
print(times[len(times) // 2] / 1e3)
"""
GPU_WORKLOAD = """
import sys, time
import roctx, torch
steps = int(sys.argv[1])
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024)).cuda().eval()
x = torch.randn(256, 1024, device="cuda")
with torch.no_grad():
    for _ in range(20):
        model(x)
    torch.cuda.synchronize()
    clock = time.perf_counter_ns
    times = []
    for i in range(steps):
        t0 = clock()
        with roctx.range("step"):
            model(x).sum().item()
        times.append(clock() - t0)
times.sort()
print(times[len(times) // 2] / 1e3)
"""


def run_once(cmd: list[str], env: dict) -> float:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return float(out.strip().splitlines()[-1])


def compare(label: str, source: str, args: list[str], env: dict, tmp: str) -> None:
    script = Path(tmp) / f"{label}.py"
    script.write_text(source)
    out = Path(tmp) / f"o-{label}"
    plain = [sys.executable, str(script), *args]
    armed = [sys.executable, "-m", "rocprof", "run", "--on-demand", "-d", str(out), str(script),
             *args]
    run_once(plain, env)  # warm the page cache (and the GPU) for both
    run_once(armed, env)
    a, b = [], []
    for _ in range(REPEATS):
        a.append(run_once(plain, env))
        b.append(run_once(armed, env))
        time.sleep(0.1)
    dbs = list(out.rglob("*.db"))
    assert not dbs, f"--on-demand with no window recorded {dbs}"
    ratios = sorted(y / x for x, y in zip(a, b, strict=True))
    ratio = ratios[len(ratios) // 2]
    print(f"{label}: plain      median step us: {summary(a)}")
    print(f"{label}: on-demand  median step us: {summary(b)}")
    print(f"{label}: on-demand / plain (median of pairs): {ratio:.4f} "
          f"(pairs min {ratios[0]:.4f}, max {ratios[-1]:.4f})")
    append_row("On-demand idle overhead (b_on_demand.py)",
               f"{label} {' x '.join(args)}, {REPEATS} pairs: median step plain {summary(a)} us, "
               f"--on-demand idle {summary(b)} us, ratio {ratio:.4f} "
               f"(pairs {ratios[0]:.4f}-{ratios[-1]:.4f})")


def main() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT),
                                         env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        compare("cpu", WORKLOAD, ["2000", "2000"], env, tmp)
        try:
            import torch

            gpu = torch.cuda.is_available()
        except ImportError:
            gpu = False
        if gpu:
            compare("gpu", GPU_WORKLOAD, ["2000"], env, tmp)
        else:
            print("gpu: skipped (no CUDA device seen by PyTorch)")


if __name__ == "__main__":
    main()
