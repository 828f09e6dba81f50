"""Regression guard for B3 (call-stack sampling at 10 kHz): the CPU a sampled process uses
against the same program under `rocprof run` without sampling, in the same alternated rounds,
for both sampling methods, each above its floor measured in the same rounds.

The goal (<= 1.05x the workload's CPU at 10 kHz) is benchmarks/b3_sampling.py's, measured there
with quartiles and py-spy beside. What no sampler can come under is the machine's: a signal
sampler pays the kernel's timer interrupt and signal delivery per sample, a reader thread its
wake-up; the C floor program (benchmarks/data/b3_signal_floor.c) measures both here, in the same
rounds, and the guard reads the sampler's cost above them. The figure is the sampled process's
CPU (every thread of it: the workload, our reader, resolver and storage threads) as the workload
reads it when it ends, the fastest of a few runs per kind: on a shared CI box CPU time hardly
moves with other load, and a run that lost the CPU is only ever slower.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT

# Timed: `make test` runs these alone, after the parallel pass (pyproject.toml, `timing`).
pytestmark = pytest.mark.timing

ROUNDS = 5
HZ = "10000"
ITERATIONS = "300"  # ~0.4 s of CPU on the CPU box: ~4,000 samples a run
FLOOR_ITERATIONS = "100000000"
# Ratio above the floor's ratio, fastest runs (i.e. CPU per sample above the floor's per tick,
# over the period: 0.01 = 1 us a sample at 10 kHz). Measured on the CPU box (2 shared cores,
# Python 3.11, load 3-8, nine runs of this test): signal method 1.06-1.11 against a signal floor
# of 1.03-1.06, thread method 1.06-1.11 against a wake-up floor of 1.01-1.10: -0.01..+0.09
# above it. Round 3 on a slower VM of the same box (signal floor 1.25) read +0.04..+0.09 for
# the signal method in its benchmark. The limit holds those with room; a
# build that spins 20 us more a sample (in the signal handler, and in the reader's look) failed
# it on the CPU box: +0.29 signal, +0.19 thread.
MAX_ABOVE_FLOOR = 0.15
# Cores' worth of CPU that other work may take while the guard measures before a result above
# the limit is not judged (an idle box reads ~0.02: the kernel's own threads).
MAX_OTHERS = 0.15


def _run(argv: list[str], env: dict, split: Path) -> float:
    """CPU seconds of the workload's process (all its threads) when the workload ended."""
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"{' '.join(argv)} exited {r.returncode}: {r.stderr[-2000:]}"
    ns = [int(x) for x in split.read_text().split()]
    split.unlink()
    return sum(ns) * 1e-9


def _busy() -> tuple[float, float, float]:
    """(seconds, the box's busy CPU seconds, this process's and its waited children's CPU
    seconds) now: busy as /proc/stat counts it, the hypervisor's steal included."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait
    own = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF,
              resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), own


def _others(before: tuple, after: tuple) -> float:
    """Cores' worth of CPU that something else took (other processes, the hypervisor) while
    the guard measured."""
    wall = max(after[0] - before[0], 1e-9)
    return max(0.0, (after[1] - before[1]) - (after[2] - before[2])) / wall


def _figures(cpu: dict, floor_cpu: dict) -> dict:
    """Per method: (its fastest run over the unsampled one's, the floor's ratio, the difference)."""
    best = {k: min(v) for k, v in cpu.items()}
    best_floor = {k: min(v) for k, v in floor_cpu.items()}
    figures = {}
    for method in ("signal", "thread"):
        ratio = best[method] / best["unsampled"]
        floor_ratio = best_floor[method] / best_floor["none"]
        figures[method] = (ratio, floor_ratio, ratio - floor_ratio)
    return figures


def test_sampling_at_10khz_costs_little_above_the_machines_floor(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import b3_sampling as b3

    floor = b3.floor_program(tmp_path)
    if floor is None:
        pytest.skip("no C compiler: the floor program cannot be built, and without it the ratio means little")
    script = tmp_path / "work.py"
    script.write_text(b3.WORKLOAD)
    split = tmp_path / "threads.txt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
    run = [sys.executable, "-m", "rocprof", "run"]
    work = [str(script), ITERATIONS, str(split)]
    configs = {
        "unsampled": [*run, "-d", str(tmp_path / "u"), *work],
        "signal": [*run, "--sample", HZ, "-d", str(tmp_path / "s"), *work],
        "thread": [*run, "--sample", HZ, "--sampling-method", "thread", "-d", str(tmp_path / "t"), *work],
    }
    floors = {
        "none": [str(floor), "0", FLOOR_ITERATIONS],
        "signal": [str(floor), HZ, FLOOR_ITERATIONS],
        "thread": [str(floor), HZ, FLOOR_ITERATIONS, "thread"],
    }
    cpu: dict[str, list[float]] = {k: [] for k in configs}
    floor_cpu: dict[str, list[float]] = {k: [] for k in floors}
    # The figure takes the fastest run of each kind: when a first set of rounds reads above
    # the limit (a box loaded by something else for part of them), a second set joins it
    # before judging, so that a run slowed by the load is less likely to be the fastest. Both
    # sides of each ratio get the same extra runs; a build that costs 20 us more a sample read
    # +0.19..+0.29 above the floor on the CPU box, well over the limit.
    start = _busy()
    for attempt in range(2):
        for _ in range(ROUNDS):
            for name, argv in configs.items():
                cpu[name].append(_run(argv, env, split))
            for name, argv in floors.items():
                out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()
                floor_cpu[name].append(float(out[0]))
        figures = _figures(cpu, floor_cpu)
        if max(above for _, _, above in figures.values()) <= MAX_ABOVE_FLOOR:
            break
        print(f"B3 guard: above the limit after {ROUNDS * (attempt + 1)} rounds:",
              {m: tuple(round(x, 3) for x in f) for m, f in figures.items()})
    best = {k: min(v) for k, v in cpu.items()}
    print("B3 guard:", {m: tuple(round(x, 3) for x in f) for m, f in figures.items()})
    worst = max(above for _, _, above in figures.values())
    others = _others(start, _busy())
    if worst > MAX_ABOVE_FLOOR and others > MAX_OTHERS:
        # A sampled process's threads wake per sample: on a box whose two cores something else
        # was using, they wait for a core, and its CPU reads high (+0.19..+0.28 measured in a
        # CI run whose last pass left work behind; 1.14-1.28x alone on the same box that day).
        pytest.skip(f"B3 guard not judged: something else took {others:.2f} of a core while it "
                    f"measured (above the floor by {worst:+.3f}); run it alone: pytest "
                    "tests/regression_guards/test_b3_sampling_guard.py")
    assert worst <= MAX_ABOVE_FLOOR, (
        f"regression guard B3: sampling at {HZ} Hz costs more than {MAX_ABOVE_FLOOR:.2f} of the program's "
        "CPU above the machine's floor; fastest of "
        f"{len(cpu['unsampled'])} alternated runs: "
        + "; ".join(
            f"{m} method {r:.3f}x the unsampled run, floor {f:.3f}x, above it {a:+.3f}"
            for m, (r, f, a) in figures.items()
        )
        + f"; CPU s: {', '.join(f'{k} {v:.3f}' for k, v in best.items())}"
        "; benchmarks/b3_sampling.py --rates 10000 shows where each sample's CPU goes"
    )
