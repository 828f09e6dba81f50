"""Cost per op of linking backward ops to forward ops (rocprof._torch_observer), on the CPU.

One process, launch sites started (as in a traced run: the observer is on only while they run),
two workloads, each timed in four configurations, alternated over rounds (the order reversed
every other round); each figure is the calling thread's CPU time (torch runs single-threaded
here: being descheduled on a shared host does not count), the least of 3 batches:

  plain      no RecordFunction callback
  floor      an empty global callback on every op, registered as the observer's forward one is
             (rocprof._torch_observer._floor_callback): PyTorch's own cost of observing ops
  observer   rocprof._torch_observer attached
  profiler   torch.profiler (CPU activity), the reference

  transformer  forward+backward+optimizer steps of a small CPU transformer (2 pre-norm encoder
               layers, d_model 64, sequence 16, batch 2: small, so that the per-op path dominates
               as on a launch-bound GPU step), at a Python depth of 20 frames (a training script's
               calls around a model). Ops per step are the RecordFunction ops the observer sees
               (every aten op, nested ones too, and autograd node of the step, counted from its
               test log).
  op loop      `y = y * 1.0` in grad mode at the same depth: every op is a forward op whose
               Python frames are keyed (the most an op costs).

Reported per configuration: (config - plain) per op, ns, quartiles over rounds; the observer's
own part is observer - floor. `--python DIR` profiles the rocprof package under DIR instead of
this checkout's (to compare builds: run both, alternated). Goal: observer <= 100 ns per op.

    python benchmarks/torch_observer_cost.py [--rounds 16] [--steps 10] [--python DIR] [--record]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from _common import ROOT, append_row

sys.path[:0] = [str(ROOT / "python"), str(ROOT)]
DEPTH = 20


def nest(depth, fn):
    return fn() if depth == 0 else nest(depth - 1, fn)


def best_ns(fn, units, batches=3):
    """CPU ns per unit of fn() (which runs `units` units): the least of `batches` runs."""
    best = float("inf")
    for _ in range(batches):
        t0 = time.thread_time_ns()
        nest(DEPTH, fn)
        best = min(best, (time.thread_time_ns() - t0) / units)
    return best


def quartiles(values):
    v = sorted(values)
    n = len(v)
    return v[n // 4], statistics.median(v), v[(3 * n) // 4]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--loop", type=int, default=5000, help="ops per op-loop batch")
    ap.add_argument("--python", help="the directory holding the rocprof package to measure")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    if a.python:
        sys.path.insert(0, a.python)

    import torch
    from rocprof import _core
    from rocprof.capture import autograd_sites, cupti

    why = autograd_sites.observer_unavailable()
    if why:
        print(f"SKIPPED: {why}")
        return 0
    torch.manual_seed(0)
    torch.set_num_threads(1)  # op overhead, not the shared host's other cores
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True,
                                             norm_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                                torch.nn.Linear(64, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x, y = torch.randn(2, 16, 64), torch.randint(0, 10, (2,))
    leaf = torch.ones(1, requires_grad=True)

    def steps(n=a.steps):
        for _ in range(n):
            loss = torch.nn.functional.cross_entropy(model(x).mean(1), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    def loop():
        z = leaf
        for _ in range(a.loop):
            z = z * 1.0

    _core._cupti_set_callsite_prefixes("\n".join(cupti.library_prefixes()))
    _core._launch_sites_start()
    obs = autograd_sites.attach_observer()
    obs._debug_start(1 << 16)
    nest(DEPTH, lambda: steps(1))
    log = obs._debug_stop()
    ops = len(log)
    fwd = obs.stats()["forward_ops"]
    with_seq = sum(1 for k, _, s, _ in log if k == "B" and s >= 0)
    steps(20)  # warm: allocator, autograd graph shapes
    obs.detach()
    configs = ["plain", "observer", "profiler"]
    if hasattr(obs, "_floor_callback"):
        configs.insert(1, "floor")

    def run(config):
        prof = None
        if config == "floor":
            obs._floor_callback(True)
        elif config == "observer":
            obs.attach(_core._launch_site_api())
        elif config == "profiler":
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            prof.__enter__()
        try:
            return best_ns(steps, a.steps * ops), best_ns(loop, a.loop)
        finally:
            if config == "floor":
                obs._floor_callback(False)
            elif config == "observer":
                obs.detach()
            elif prof is not None:
                prof.__exit__(None, None, None)

    t = {c: ([], []) for c in configs}
    load = [os.getloadavg()[0]]
    for r in range(a.rounds):
        for c in configs if r % 2 == 0 else configs[::-1]:
            step_ns, loop_ns = run(c)
            t[c][0].append(step_ns)
            t[c][1].append(loop_ns)
    load.append(os.getloadavg()[0])
    st = obs.stats()  # the last observer round's (they are reset when it attaches)
    _core._launch_sites_stop()

    def added(config, which):
        return quartiles([b - p for p, b in zip(t["plain"][which], t[config][which], strict=True)])

    print(f"torch {torch.__version__}; transformer step: {ops} RecordFunction ops ({fwd} forward ops "
          f"remembered, {with_seq} backward ops with a sequence number); Python depth {DEPTH}; "
          f"{a.rounds} rounds alternated; load average {load[0]:.1f} before, {load[1]:.1f} after")
    print(f"plain: transformer {statistics.median(t['plain'][0]):.0f} ns per op, op loop "
          f"{statistics.median(t['plain'][1]):.0f} ns per op (CPU, median)")
    rows = []
    for c in configs[1:]:
        (s1, s2, s3), (l1, l2, l3) = added(c, 0), added(c, 1)
        rows.append(f"{c} +{s2:.0f} [{s1:.0f}, {s3:.0f}] / +{l2:.0f} [{l1:.0f}, {l3:.0f}]")
        print(f"{c:>9}: transformer +{s2:.0f} ns per op (quartiles {s1:.0f} .. {s3:.0f}); "
              f"op loop +{l2:.0f} ns per op ({l1:.0f} .. {l3:.0f})")
    if "floor" in configs:
        own = quartiles([o - f for f, o in zip(t["floor"][0], t["observer"][0], strict=True)])
        print(f"observer above the floor, transformer: {own[1]:+.0f} ns per op (quartiles "
              f"{own[0]:+.0f} .. {own[2]:+.0f}); goal: observer <= 100 ns per op")
    print(f"links in the last observer round: {st}")
    append_row("torch observer: cost per op (CPU)",
               f"torch {torch.__version__}, depth {DEPTH}, {a.rounds} rounds, load "
               f"{load[0]:.1f}/{load[1]:.1f}, added ns per op, median [quartiles], transformer step "
               f"({ops} ops) / op loop: " + "; ".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
