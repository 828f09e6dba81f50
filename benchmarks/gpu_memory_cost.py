"""What the caching allocator's capture (--memory-allocation-trace) costs, on the GPU machine.

One fresh process per round runs every variant in turn, in-process, on the same warmed-up
workloads (gpu_launch_cost.py's method: across processes step time spreads more than these
costs), the order reversed every other pass:

  plain     no session
  kernels   `rocprof run --kernel-trace`: the floor the allocator's capture adds to
  +allocator  `rocprof run --kernel-trace --allocator-trace`: every caching-allocator action
            (VIRTUAL rows, with its line) alone
  +memory   `rocprof run --kernel-trace --memory-allocation-trace`: CUPTI's runtime allocations
            (REAL rows, with the CUPTI callbacks on every API call they need) and the allocator's

Workloads: "alloc" (N x `torch.empty(256, device="cuda")` freed at once: two allocator actions
per unit, no kernel, no driver allocation once warm), "transformer" (tests/gpu/workloads/
torch_steps.py's bf16 encoder training step). Reported: time per unit, time added over
"kernels", allocator events per unit (the rows of the +memory session) and the time added per
allocator event; and "hook": our part alone, the stand-in of the trace hook
(_torch_observer._standin_trace, repeat=N: the capture of the line and the record, as the real
hook's path after torch's TraceEntry) with the capture on, and off (a session without it).

  python3 benchmarks/gpu_memory_cost.py [--rounds 2] [--inner 4] [--allocs 20000] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT), str(ROOT / "tests/gpu/workloads"),
                str(ROOT / "benchmarks")]

VARIANTS = [("plain", None), ("kernels", ["--kernel-trace=true"]),
            ("+allocator", ["--kernel-trace=true", "--allocator-trace=true"]),
            ("+memory", ["--kernel-trace=true", "--memory-allocation-trace=true"])]


class AllocLoop:
    def __init__(self, n):
        import torch

        self.torch, self.units, self.dev = torch, n, torch.device("cuda")
        self.run(n)
        torch.cuda.synchronize()

    def run(self, n):
        empty, dev = self.torch.empty, self.dev
        for _ in range(n):
            x = empty(256, device=dev)
            del x

    def timed(self, batches=8):
        per = max(1, self.units // batches)
        best = float("inf")
        for _ in range(batches):
            b0 = time.perf_counter()
            self.run(per)
            self.torch.cuda.synchronize()
            best = min(best, time.perf_counter() - b0)
        return {"best": best * self.units / per}


def allocator_rows(db):
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n = con.execute("SELECT count(*) FROM rocpd_memory_allocate M JOIN rocpd_event E ON E.id ="
                    " M.event_id JOIN rocpd_string S ON S.id = E.category_id WHERE S.string LIKE"
                    " 'TORCH_ALLOCATOR_%'").fetchone()[0]
    con.close()
    return n


def hook_ns(n, memory):
    """ns per stand-in allocator action inside a session with (or without) the capture."""
    from gpu_launch_cost import options_for
    from rocprof import _torch_observer as obs
    from rocprof.session import Session

    argv = ["--kernel-trace=true"] + (["--memory-allocation-trace=true"] if memory else [])
    opts = options_for(argv)
    tmp = tempfile.mkdtemp(prefix="memcost_hook_")
    opts.output_dir, opts.output_file = tmp, f"hook{int(memory)}"
    s = Session(opts)
    s.start()
    t0 = time.perf_counter_ns()
    obs._standin_trace(0, 0, 0x7F0000000000, 512, repeat=n)
    dt = time.perf_counter_ns() - t0
    s.stop()
    os.unlink(s.path)
    return dt / n


def child(out_path, allocs, steps, inner):
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)
    from gpu_launch_cost import Workload, options_for
    from rocprof.session import Session

    loads = {"alloc": AllocLoop(allocs), "transformer": Workload("transformer", 0, steps)}
    res = {name: {lab: [] for lab, _ in VARIANTS} for name in loads}
    rows = {}
    tmp = tempfile.mkdtemp(prefix="memcost_")
    for i in range(inner):
        for label, argv in (VARIANTS if i % 2 == 0 else VARIANTS[::-1]):
            for name, w in loads.items():
                if argv is None:
                    res[name][label].append(w.timed()["best"])
                    continue
                opts = options_for(argv)
                opts.output_dir, opts.output_file = tmp, f"{name}_{label.strip('+')}"
                s = Session(opts)
                s.start()
                res[name][label].append(w.timed()["best"])
                s.stop()
                if label == "+memory":  # timed(): 8 batches of units // 8, the workload's
                    ran = (w.units // 8) * 8 + (0 if name == "alloc" else max(1, w.units // 10))
                    rows[name] = allocator_rows(s.path) / ran
                os.unlink(s.path)
    res["_events_per_unit"] = rows
    res["_units"] = {name: w.units for name, w in loads.items()}
    res["_hook_ns"] = {"on": [hook_ns(200_000, True) for _ in range(3)],
                       "off": [hook_ns(200_000, False) for _ in range(3)]}
    with open(out_path, "w") as fh:
        json.dump(res, fh)


def report(rounds):
    med = statistics.median
    print("\n| workload | variant | per unit | added over kernels | allocator events/unit |"
          " per event | events/s |")
    print("|---|---|---|---|---|---|---|")
    for name in ("alloc", "transformer"):
        units = rounds[0]["_units"][name]
        ev = med([r["_events_per_unit"][name] for r in rounds])
        base = med([med(r[name]["kernels"]) for r in rounds]) / units
        for label, _ in VARIANTS:
            t = med([med(r[name][label]) for r in rounds]) / units
            unit = f"{t * 1e6:.2f} us" if name == "alloc" else f"{t * 1e3:.3f} ms"
            added = (t - base) / base * 100
            ours = label in ("+allocator", "+memory")
            per_event = f"{(t - base) / ev * 1e9:.0f} ns" if ours and ev else ""
            rate = f"{ev / t:,.0f}" if ours else ""
            print(f"| {name} | {label} | {unit} | {added:+.1f} % | {ev:.1f} | {per_event} | {rate} |")
    on = med([x for r in rounds for x in r["_hook_ns"]["on"]])
    off = med([x for r in rounds for x in r["_hook_ns"]["off"]])
    print(f"\nhook (stand-in, our part alone): {on:.0f} ns per action with the capture on, "
          f"{off:.0f} ns off")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--inner", type=int, default=4)
    ap.add_argument("--allocs", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.allocs, a.steps, a.inner)
        return
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}:{ROOT}")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            out = os.path.join(tmp, f"r{r}.json")
            subprocess.run([sys.executable, __file__, "--child", out, "--allocs", str(a.allocs),
                            "--steps", str(a.steps), "--inner", str(a.inner)], check=True, env=env)
            with open(out) as fh:
                rounds.append(json.load(fh))
            print(f"round {r + 1}/{a.rounds} done", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rounds, fh)
    report(rounds)


if __name__ == "__main__":
    main()
