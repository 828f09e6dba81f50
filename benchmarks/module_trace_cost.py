"""Cost per nn.Module call of --module-trace (a ROCTx range per call), on the CPU.

One process, one recording session (the default options: ROCTx ranges recorded, no GPU here),
the module hooks (rocprof.capture.module_trace) installed and removed in turns over rounds (the
order reversed every other round). Two workloads, each a forward pass in no_grad mode:

  identity  nn.Sequential of 100 nn.Identity: the hooks' cost with next to no work around it
  linear    a small MLP: 2 blocks of (Linear 64x64, GELU, Linear 64x64) in a Sequential, batch 8

Each figure is the calling thread's CPU time, the least of 3 batches; reported: (on - off) per
module call, in µs, median and quartiles over rounds.

    python benchmarks/module_trace_cost.py [--rounds 12] [--calls 2000] [--record]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from _common import ROOT, append_row

sys.path[:0] = [str(ROOT / "python"), str(ROOT)]


def best_ns(fn, units, batches=3):
    best = float("inf")
    for _ in range(batches):
        t0 = time.thread_time_ns()
        fn()
        best = min(best, (time.thread_time_ns() - t0) / units)
    return best


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):.2f} [{q[0]:.2f} .. {q[2]:.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--calls", type=int, default=2000, help="forward passes per batch")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()

    import rocprof
    import torch
    from rocprof.capture import module_trace

    torch.set_num_threads(1)
    nets = {"identity": torch.nn.Sequential(*[torch.nn.Identity() for _ in range(100)]),
            "linear": torch.nn.Sequential(*[torch.nn.Sequential(
                torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 64))
                for _ in range(2)])}
    inputs = {"identity": torch.ones(1), "linear": torch.ones(8, 64)}
    calls = {name: sum(1 for _ in net.modules()) for name, net in nets.items()}
    added: dict[str, list[float]] = {name: [] for name in nets}
    with tempfile.TemporaryDirectory() as out, rocprof.profile(output_dir=out), torch.no_grad():
        for r in range(a.rounds):
            for name, net in nets.items():
                x = inputs[name]

                def batch(net=net, x=x):
                    for _ in range(a.calls):
                        net(x)
                times = {}
                for on in ((True, False) if r % 2 else (False, True)):
                    if on:
                        module_trace.install()
                    try:
                        times[on] = best_ns(batch, a.calls * calls[name])
                    finally:
                        if on:
                            module_trace.uninstall()
                added[name].append((times[True] - times[False]) / 1000)
    for name, values in added.items():
        print(f"{name}: {calls[name]} module calls per forward; --module-trace adds "
              f"{quartiles(values)} µs per module call ({a.rounds} rounds)")
    append_row("--module-trace: cost per module call (CPU)",
               f"torch {torch.__version__}, {a.rounds} rounds alternated, µs per module call "
               "(thread CPU, median [quartiles]): "
               + "; ".join(f"{n} {quartiles(v)}" for n, v in added.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
