"""What `--energy` costs a training step, on the GPU machine (the energy issue's goal: <= 0.5 %
of step time).

One process runs sessions back to back on warmed-up workloads, alternating a session without
and with the energy reader (and the same pair under --sys-trace), order reversed every other
round so that a drift cancels out. Across processes this host's step time spreads far more than
the cost measured here, so only sessions of one process are compared. The energy reader is a
thread of its own reading NVML's cumulative counter (and power) at --process-freq's rate; what
it can cost the step is that thread's CPU time and any contention with the launching thread.

Reported per workload and pair: the median over rounds of (with - without) / without of the
step time (the fastest of 8 batches, benchmarks/gpu_launch_cost.py's figure) with quartiles, the
CPU time of threads other than the launching one per second, and the energy readings stored per
second of the session (the rate actually achieved). Each session first runs steps for 1.5 s
(settle()), then the timed steps: --steps transformer steps (~8 ms each on an H200) and 3/4 as
many GEMM steps (~11 ms), a few seconds each, as a run of minutes is.

  python3 benchmarks/gpu_energy_cost.py [--rounds 6] [--steps 400] [--json FILE] [--pin CPU]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from gpu_launch_cost import Workload, options_for  # noqa: E402  (sets sys.path for rocprof)

PAIRS = [("default", []), ("sys-trace", ["--sys-trace=true"])]
SETTLE_S = 1.5


class Gemm:
    """A GPU-bound step: bf16 GEMMs of 8192^2 (~5 ms each on an H100/H200), 8 per step."""

    def __init__(self, steps):
        import torch

        self.name, self.torch, self.units = "gemm", torch, steps
        self.a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        self.b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        self.run(3)
        torch.cuda.synchronize()

    def run(self, n):
        for _ in range(n):
            for _ in range(8):
                self.c = self.a @ self.b

    timed = Workload.timed


def settle(w, seconds: float = SETTLE_S) -> None:
    """Steps for `seconds` inside the session before it is timed: the energy reader learns the
    counter's update period from its first 8 changes (~0.9 s at an H200's 100 ms) and reads
    less from then on, the state a run of minutes is in."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        w.run(1)
    w.torch.cuda.synchronize()


def readings(db: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM metric_samples WHERE metric = 'device_energy'").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        con.close()


PIN: list[int] = []  # --pin CPU: the launching thread's own core during the timed steps


def pin_launcher(cpu: int) -> set[int]:
    """The launching (this) thread alone on `cpu`, every other thread of the process (the
    profiler's and CUPTI's, started by then) on the rest of the process's CPUs: a launch-bound
    step's time then depends less on where the scheduler put the thread and on who shares its
    core. Returns the set to restore, so that the next session's threads start unpinned."""
    allowed = os.sched_getaffinity(0)
    me = threading.get_native_id()
    rest = (allowed - {cpu}) or allowed
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu} if int(tid) == me else rest)
        except OSError:  # a thread that has just ended
            pass
    return allowed


def alternate(*labels):
    """A round's order of labels: as given in even rounds, reversed in odd ones, so that a drift
    of the host cancels out (sessions)."""
    return lambda i: labels if i % 2 == 0 else labels[::-1]


def sessions(loads, order_of, argv_of, rounds: int, prefix: str):
    """(label, workload, measurement, database) of sessions run back to back in this process:
    in round i one session per label of order_of(i) and workload; each session runs steps for
    SETTLE_S (settle) before its timed steps, its seconds in measurement["session"]. The
    database is the caller's to read (it is removed when the caller asks for the next one)."""
    from rocprof.session import Session

    tmp = tempfile.mkdtemp(prefix=prefix)
    for i in range(rounds):
        for label in order_of(i):
            for w in loads:
                opts = options_for(argv_of(label))
                opts.output_dir, opts.output_file = tmp, f"{w.name}_{label}_{i}"
                s = Session(opts)
                s.start()
                t0 = time.perf_counter()
                settle(w)
                pinned = pin_launcher(PIN[0]) if PIN else None
                m = w.timed()
                m["session"] = time.perf_counter() - t0
                s.stop()
                if pinned is not None:
                    os.sched_setaffinity(threading.get_native_id(), pinned)
                yield label, w, m, s.path
                os.unlink(s.path)


def measure(rounds: int, steps: int) -> dict:
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    loads = [Workload("transformer", 0, steps), Gemm(max(4, steps * 3 // 4))]
    res = {w.name: {f"{p}{e}": [] for p, _ in PAIRS for e in ("", "+energy")} for w in loads}
    argv = dict(PAIRS)
    pairs = [alternate(p, p + "+energy") for p, _ in PAIRS]

    def argv_of(label):
        pair, energy = label.removesuffix("+energy"), label.endswith("+energy")
        return [*argv[pair], *(["--energy=true"] if energy else [])]

    def order_of(i):
        return [lab for o in pairs for lab in o(i)]

    for label, w, m, db in sessions(loads, order_of, argv_of, rounds, "energy_cost_"):
        m["readings"] = readings(db)
        res[w.name][label].append(m)
    return res


def quartiles(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return q[0], statistics.median(xs), q[2]


def paired(off: list, on: list) -> dict:
    """The figures of sessions without (`off`) and with (`on`) a capture source, round by round:
    the timed steps without (ms), the relative change's median and quartiles (%), and the other
    threads' CPU ms per second without and with."""
    rel = [(b["best"] - a["best"]) / a["best"] * 100 for a, b in zip(off, on, strict=True)]
    q1, med, q3 = quartiles(rel)
    return {"ms": statistics.median(a["best"] for a in off) * 1e3, "med": med, "q1": q1, "q3": q3,
            "cpu_off": statistics.median(a["other_cpu"] / a["wall"] * 1e3 for a in off),
            "cpu_on": statistics.median(b["other_cpu"] / b["wall"] * 1e3 for b in on)}


def cells(f: dict) -> str:
    """'3,918.2 ms | +0.34 % [+0.19, +0.51] | 14.6 -> 80.7' of paired()'s figures."""
    return (f"{f['ms']:,.1f} ms | {f['med']:+.2f} % [{f['q1']:+.2f}, {f['q3']:+.2f}] |"
            f" {f['cpu_off']:.1f} -> {f['cpu_on']:.1f}")


def report(res: dict) -> None:
    print("| workload | pair | timed steps (without) | added by --energy: median [q1, q3] | "
          "other threads' CPU, ms/s (without -> with) | energy readings/s of session |")
    print("|---|---|---|---|---|---|")
    for name, by in res.items():
        for pair, _ in PAIRS:
            on = by[pair + "+energy"]
            rate = statistics.median(b["readings"] / b["session"] for b in on)
            print(f"| {name} | {pair} | {cells(paired(by[pair], on))} | {rate:,.0f} |")


def gpu_main(name: str, doc: str, measure, report, rounds: int, steps: int) -> int:
    """A GPU cost benchmark's command line: --rounds, --steps, --json; on the GPU host only."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--pin", type=int, metavar="CPU",
                    help="the launching thread alone on this CPU during the timed steps")
    args = ap.parse_args()
    if args.pin is not None:
        PIN.append(args.pin)
    import torch

    if not torch.cuda.is_available():
        print(f"{name}: no CUDA GPU here; run it on the GPU host")
        return 2
    res = measure(args.rounds, args.steps)
    if args.json:
        Path(args.json).write_text(json.dumps(res))
    report(res)
    return 0


if __name__ == "__main__":
    sys.exit(gpu_main("gpu_energy_cost", __doc__, measure, report, rounds=6, steps=400))
