"""Runs without GPU work for `rocpd diff`: a training loop on the CPU (a data loader and a model),
written by the real writer (rocpd.testing.DatabaseBuilder).

Per step (ROCTx "train_step"), on the main thread: "data" (loader.py:12 read_batch, then
loader.py:20 decode: 60/40), "forward" (model.py:30 matmul), "backward" (model.py:40
matmul_grad), "optimizer" (optim.py:8 step), each a ROCTx range, with a call-stack sample every
100 µs (rocprof.sampling.hz 10000) inside. Every duration carries +-5 % noise from ``seed``;
``pace`` stretches all of one run (the host's speed, which moves from run to run); ``slow``
({phase: factor}) is the planted change.
"""

from __future__ import annotations

import os
import random

from rocpd.testing import DatabaseBuilder

T0 = 2_000_000_000_000
US = 1_000
HZ = 10_000
PHASES = [("data", 1200.0, [("read_batch", "/home/user/proj/loader.py", 12, 0.6),
                            ("decode", "/home/user/proj/loader.py", 20, 0.4)]),
          ("forward", 1500.0, [("matmul", "/home/user/proj/model.py", 30, 1.0)]),
          ("backward", 2500.0, [("matmul_grad", "/home/user/proj/model.py", 40, 1.0)]),
          ("optimizer", 300.0, [("step", "/home/user/proj/optim.py", 8, 1.0)])]
MAIN = ("main", "/home/user/proj/train.py", 5)


def run(path, seed=0, steps=30, slow=None, pace=1.0, t0=T0, frameless=False):
    """One run (see the module's text); returns ``path``. ``frameless``: each step also has a
    sample with no frames (a thread caught outside Python code)."""
    slow = slow or {}
    rng = random.Random(seed)
    if os.path.exists(path):
        os.unlink(path)
    period = 1e9 / HZ
    with DatabaseBuilder(path, gpus=0, command="python train_cpu.py") as b:
        b.metadata("rocprof.sampling.hz", HZ)
        t = t0
        next_sample = t0 + rng.uniform(0, period)
        for _ in range(steps):
            s0 = t
            t += int(20 * US * rng.uniform(0.95, 1.05))
            for phase, us, funcs in PHASES:
                p0 = t
                dur = us * slow.get(phase, 1.0) * pace * rng.uniform(0.95, 1.05) * US
                for fn, file, line, share in funcs:
                    f1 = t + int(dur * share)
                    while next_sample < f1:
                        b.sample(None, int(next_sample), call_stack=[MAIN, (fn, file, line)])
                        next_sample += period
                    t = f1
                b.marker(phase, p0, t)
            if frameless:
                b.sample(None, t, call_stack=[])
            t += int(10 * US * rng.uniform(0.95, 1.05))
            b.marker("train_step", s0, t)
    return str(path)


def repeats(folder, name, paces, seed=0, **planted):
    """Runs one after the other (10 s apart), run i at ``paces[i]``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    return [run(folder / f"{name}{i + 1}.db", seed=seed + i, pace=p, t0=T0 + i * 10_000_000_000,
                **planted) for i, p in enumerate(paces)]
