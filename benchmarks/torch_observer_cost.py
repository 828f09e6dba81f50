"""Cost per op of linking backward ops to forward ops (rocprof._torch_observer), on the CPU.

One process, launch sites started (as in a traced run: the observer is on only while they run),
two workloads, each timed with the observer off and on, alternated over rounds; each figure is
the calling thread's CPU time (torch runs single-threaded here: being descheduled on a shared
host does not count), the least of 3 batches:

  transformer  forward+backward+optimizer steps of a small CPU transformer (2 pre-norm encoder
               layers, d_model 64, sequence 16, batch 2: small, so that the per-op path dominates
               as on a launch-bound GPU step), at a Python depth of 20 frames (a training script's
               calls around a model). Ops per step are the RecordFunction ops the observer sees
               (every aten op, nested ones too, and autograd node of the step, counted from its
               test log). Also timed under torch.profiler (CPU activity) as a reference.
  op loop      `y = y * 1.0` in grad mode at the same depth: every op is a forward op whose
               Python frames are copied (the most an op costs).

Reported: the median over rounds of (on - off) / ops in ns per op; goal <= 1 µs per op.

    python benchmarks/torch_observer_cost.py [--rounds 9] [--steps 15] [--record]
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--loop", type=int, default=20000, help="ops per op-loop batch")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()

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

    t = {k: [] for k in ("off", "on", "prof", "loop_off", "loop_on")}
    for _ in range(a.rounds):
        obs.detach()
        t["off"].append(best_ns(steps, a.steps))
        t["loop_off"].append(best_ns(loop, a.loop))
        obs.attach(_core._launch_site_api())
        t["on"].append(best_ns(steps, a.steps))
        t["loop_on"].append(best_ns(loop, a.loop))
        st = obs.stats()
        obs.detach()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            t["prof"].append(best_ns(steps, a.steps))
        obs.attach(_core._launch_site_api())
    _core._launch_sites_stop()

    def per(on, off, n):
        d = [(b - o) / n for o, b in zip(t[off], t[on], strict=True)]
        return statistics.median(d), min(d), max(d)

    med, lo, hi = per("on", "off", ops)
    prof = per("prof", "off", ops)[0]
    loop_med, loop_lo, loop_hi = per("loop_on", "loop_off", 1)
    print(f"torch {torch.__version__}; transformer step: {ops} RecordFunction ops ({fwd} forward ops "
          f"remembered, {with_seq} backward ops with a sequence number); Python depth {DEPTH}")
    print(f"step off {statistics.median(t['off']) / 1e3:.1f} us, on "
          f"{statistics.median(t['on']) / 1e3:.1f} us of CPU (median of {a.rounds} rounds)")
    print(f"transformer: observer {med:.0f} ns per op (rounds: min {lo:.0f}, max {hi:.0f}); goal "
          f"<= 1000 ns; torch.profiler (CPU activity), same rounds: {prof:.0f} ns per op")
    print(f"op loop: observer {loop_med:.0f} ns per forward op remembered (min {loop_lo:.0f}, max "
          f"{loop_hi:.0f}; op {statistics.median(t['loop_off']):.0f} ns without)")
    print(f"links in a round's timed work: {st}")
    append_row("torch observer: cost per op (CPU)",
               f"torch {torch.__version__}, depth {DEPTH}: transformer step ({ops} ops) observer "
               f"{med:.0f} ns/op (min {lo:.0f}, max {hi:.0f}), torch.profiler CPU {prof:.0f} ns/op; "
               f"op loop {loop_med:.0f} ns per forward op remembered (min {loop_lo:.0f}, max "
               f"{loop_hi:.0f}); {a.rounds} rounds alternated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
