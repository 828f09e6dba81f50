"""One workload under one tracing setting, stepped for a fixed time: the process a CPU profiler
(perf) watches to say where each setting's cost goes (benchmarks/gpu_perf_ladder.sh).

Settings as benchmarks/gpu_paired_cost.py names them (plain, cupti_raw, cupti_sys, default,
sys-trace) and torch.profiler (CPU+CUDA). The workload is warmed and the session's first step
run before the timed stretch; prints steps, kernels per step (from a kernel-only session
before the setting's, where it has one) and us per kernel of the stretch.

    python3 benchmarks/gpu_steady.py --setting default [--workload transformer] [--seconds 8]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time

from gpu_launch_cost import Workload
from gpu_paired_cost import SESSIONS, kernels_per_step, session


def main():
    ap = argparse.ArgumentParser()
    # fresh: plain in a process that never traced (plain runs after the kernel-count session,
    # as the ladder's plain runs after other sessions: what CUPTI leaves behind counts there)
    ap.add_argument("--setting", required=True, choices=[*SESSIONS, "torch.profiler", "fresh"])
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--ready", default=None, metavar="FILE",
                    help="written once warm, just before the timed stretch (a profiler attached "
                         "then sees the steps alone)")
    a = ap.parse_args()
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    w = Workload(a.workload, 0, 4)
    with tempfile.TemporaryDirectory() as tmp:
        kpu = kernels_per_step(w, tmp) if a.setting not in ("torch.profiler", "fresh") else float("nan")
        if a.setting == "torch.profiler":
            from torch.profiler import ProfilerActivity, profile

            ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        elif a.setting == "fresh" or SESSIONS[a.setting] is None:
            ctx = contextlib.nullcontext()
        else:
            ctx = _session(w, a.setting, tmp)
        with ctx:
            w.run(1)
            w.torch.cuda.synchronize()
            if a.ready:
                with open(a.ready, "w") as fh:
                    fh.write("ready\n")
            t0 = time.perf_counter()
            steps = 0
            while time.perf_counter() - t0 < a.seconds:
                w.run(4)
                steps += 4
            w.torch.cuda.synchronize()
            dt = time.perf_counter() - t0
    print(f"{a.setting} {a.workload}: {steps} steps in {dt:.2f} s, {steps / dt:.2f} steps/s, "
          f"{1e3 * dt / steps:.3f} ms per step, "
          f"{kpu:.1f} kernels per step, {1e6 * dt / (steps * kpu):.2f} us per kernel", flush=True)


@contextlib.contextmanager
def _session(w, label, tmp):
    s = session(w, label, tmp)
    try:
        yield s
    finally:
        s.stop()
        os.unlink(s.path)


if __name__ == "__main__":
    main()
