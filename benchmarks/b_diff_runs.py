"""How many runs per side a host-side verdict of `rocpd diff` takes, on generated runs.

    PYTHONPATH=python:. python benchmarks/b_diff_runs.py [--trials 20] [--runs 1 2 3 5 10]
                                                          [--run-noise 0.5]

The noise model (tests/unit/rocpd/diff/diff_pairs.py, written by the real writer): a training loop of
30 steps, 1.6 ms of GPU work per step (each kernel +-3 %), and the host's own work at each step's
start while the GPU idles: per run, ``HOST_US`` times a factor drawn from a log-normal (sigma
``SIGMA``: the host's pace of that run), per step +-10 % of it, and one step in ten a pause of
100-400 µs. With HOST_US 1000 and sigma 0.5 host-side step time moves by 20-30 % between two runs
of the unchanged program, as it did on a GPU host (the idle per step by more), while the steps of
one run agree within a few per cent.

Per number of runs per side k and trial: k baseline runs and k new runs, all with fresh paces;
"unchanged": the new runs are the same program; "host +20 %" (+50 %): the new runs' host works
a fifth (half) of a baseline step longer per step. Counted: false alarms (any significant change
of an unchanged pair) and detections (the host's line named first, significant). With one run
per side a host-side change never counts by default; ``--run-noise`` gives it a floor (a share
of a step) to measure what such a floor would let through.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "rocpd" / "diff"))

import diff_pairs  # noqa: E402 - the generator of the tests

import rocpd  # noqa: E402

HOST_US = 1000.0
SIGMA = 0.5
STEP_US = 3000.0  # a baseline step, on average over the paces
SHIFTS = (0.2, 0.5)


def side(folder: Path, name: str, k: int, rng: random.Random, extra_us: float) -> list[str]:
    paces = [HOST_US * rng.lognormvariate(0.0, SIGMA) + extra_us for _ in range(k)]
    out = []
    for i, h in enumerate(paces):
        out.append(str(diff_pairs.run(folder / f"{name}{i}.db", seed=rng.randrange(1 << 30),
                                      host_us=h, t0=diff_pairs.T0 + i * 10_000_000_000)))
    return out


def trial(folder: Path, k: int, seed: int, shift: float, run_noise=None) -> tuple[bool, bool]:
    """(any significant change, the host's line named first and significant)."""
    rng = random.Random(seed)
    a = side(folder, "a", k, rng, 0.0)
    b = side(folder, "b", k, rng, shift * STEP_US)
    d = rocpd.diff(a if k > 1 else a[0], b if k > 1 else b[0], resamples=500,
                   run_noise=run_noise)
    top = d.items.iloc[0]
    named = bool(top["significant"]) and top["line"] == "train.py:38" and top["kind"] == "idle"
    return d.changed, named


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--runs", type=int, nargs="+", default=[1, 2, 3, 5, 10])
    ap.add_argument("--run-noise", type=float, default=None)
    args = ap.parse_args()
    n = args.trials
    print("runs/side | false alarms (unchanged) | host +20 % named first | host +50 % named first")
    with tempfile.TemporaryDirectory() as tmp:
        for k in args.runs:
            rn = args.run_noise
            alarms = sum(trial(Path(tmp), k, 1000 * k + t, 0.0, rn)[0] for t in range(n))
            named = [sum(trial(Path(tmp), k, 5000 * k + 100 * i + t, s, rn)[1] for t in range(n))
                     for i, s in enumerate(SHIFTS)]
            print(f"{k} | {alarms}/{n} | {named[0]}/{n} | {named[1]}/{n}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
