"""What `--gpu-metrics` costs a launch-bound training step, measured inside sessions rather than
between them (on the GPU machine; the issue's goal: <= 2 % of step time).

Between sessions of one process a launch-bound step's time spreads more than the goal: an A/A
run of benchmarks/gpu_metrics_cost.py (both sessions alike) read +14 % and +17 % on an H200.
Here each session alternates batches of steps paused and resumed (roctx.pause / roctx.resume):
a paused session stops the GPU's PM sampling and drops its records, so within one session the
ratio of resumed to paused batch times holds what sampling and recording cost, free of whatever
differs between sessions. Two kinds of session are alternated: kernel tracing alone ("trace":
the ratio is what recording costs) and kernel tracing with --gpu-metrics ("metrics": recording
and sampling); the sampler's cost is the difference of the two ratios, round by round.

Each batch: toggle, wait 60 ms (the sampler stops or starts within its 20 ms drain period),
run the batch's steps, synchronise; the batch's order (paused first or resumed first) alternates.
The launching thread is pinned alone on one CPU (--pin) during the batches.

  python3 benchmarks/gpu_metrics_toggle.py [--rounds 6] [--steps 400] [--pin 3] [--json FILE]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from gpu_energy_cost import PIN, alternate, gpu_main, pin_launcher, quartiles, settle  # noqa: E402
from gpu_launch_cost import Workload, options_for  # noqa: E402  (sets sys.path for rocprof)

KINDS = {"trace": ["--kernel-trace=true"],
         "metrics": ["--kernel-trace=true", "--gpu-metrics=true"]}
BATCHES = 16
SETTLE_TOGGLE_S = 0.06


def ratio_in_session(w, batches: int = BATCHES) -> float:
    """Median resumed batch time over median paused batch time, batches alternated."""
    import roctx

    per = max(1, w.units // batches)
    times = {True: [], False: []}
    for b in range(batches):
        on = (b % 4) in (0, 3)  # on, off, off, on, ...: each state first as often as second
        (roctx.resume if on else roctx.pause)()
        time.sleep(SETTLE_TOGGLE_S)
        t0 = time.perf_counter()
        w.run(per)
        w.torch.cuda.synchronize()
        times[on].append(time.perf_counter() - t0)
    roctx.resume()
    return statistics.median(times[True]) / statistics.median(times[False])


def measure(rounds: int, steps: int) -> dict:
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)
    from rocprof.session import Session

    loads = [Workload("transformer", 0, steps), Workload("cnn", 0, steps)]
    res = {w.name: {k: [] for k in KINDS} for w in loads}
    tmp = tempfile.mkdtemp(prefix="gpu_metrics_toggle_")
    order = alternate(*KINDS)
    for i in range(rounds):
        for kind in order(i):
            for w in loads:
                opts = options_for(KINDS[kind])
                opts.output_dir, opts.output_file = tmp, f"{w.name}_{kind}_{i}"
                s = Session(opts)
                s.start()
                settle(w)
                pinned = pin_launcher(PIN[0]) if PIN else None
                res[w.name][kind].append(ratio_in_session(w))
                s.stop()
                if pinned is not None:
                    os.sched_setaffinity(threading.get_native_id(), pinned)
                os.unlink(s.path)
        # Each round's ratios as it ends: a run cut short keeps what it measured.
        print(f"round {i + 1}: " + "; ".join(
            f"{name} " + " ".join(f"{k} {v[-1]:.4f}" for k, v in by.items())
            for name, by in res.items()), flush=True)
    return res


def report(res: dict) -> None:
    print("| workload | recording: resumed / paused (trace) | recording and sampling (metrics) | "
          "sampling's cost: metrics - trace, median [q1, q3] |")
    print("|---|---|---|---|")
    for name, by in res.items():
        cost = [(m - t) * 100 for t, m in zip(by["trace"], by["metrics"], strict=True)]
        q1, med, q3 = quartiles(cost)
        print(f"| {name} | {statistics.median(by['trace']):.4f} | "
              f"{statistics.median(by['metrics']):.4f} | {med:+.2f} % [{q1:+.2f}, {q3:+.2f}] |")


if __name__ == "__main__":
    sys.exit(gpu_main("gpu_metrics_toggle", __doc__, measure, report, rounds=6, steps=400))
