"""Where the tracing cost per kernel launch goes (issue 16), on the GPU machine.

Each round is one fresh process that runs every variant in turn, in-process, on the same
warmed-up workloads, so that a variant is compared with the plain run of the same process
(across processes this host's step time spreads by +-20 %, more than the costs measured here).
Variants form a ladder, each adding one part of the default to the one before (the CUPTI
settings through ROCPROF_CUPTI_OPTIONS, read at each session start):

  plain         no session
  cupti_raw     CUPTI kernel activity only; buffers handed back unread, no timestamp callback:
                CUPTI's own cost
  +timestamp    + our CLOCK_BOOTTIME timestamp callback
  +records      + buffers turned into records, drained and written to SQLite (the issue's
                "floor": CUPTI kernel activity alone, as benchmarks/gpu_b2_b5.py's "k")
  +copies       + memcpy/memset activity kinds
  +callbacks    + ENTER/EXIT callbacks on launches, copies and sets (thread, correlation)
  +roctx        + the innermost ROCTx range of each launch
  default       + the Python launch site: `rocprof run` with no tracing flag
  sys-trace     `rocprof run --sys-trace`
  sys-trace-all   the same with --runtime-trace-all (cudaGetDevice & co. recorded too)
  torch.profiler  CPU+CUDA activities (last: it keeps CUPTI to itself once used)

Workloads: "launch" (N launches of a one-element in-place add: the launch path alone),
"transformer" and "cnn" (tests/gpu/workloads/torch_steps.py's training steps; kernels per step are
those the "+records" session recorded, which records kernel dispatches only). Reported per
workload and variant: the median over rounds of the time added per kernel over the round's
plain run (in us), of the CPU time of threads other than the launching one (drain, CUPTI's
and the resolver's threads) per kernel, and records and bytes on disk per record.

  python3 benchmarks/gpu_launch_cost.py [--rounds 5] [--launches 4000] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT), str(ROOT / "tests/gpu/workloads")]

_OFF = ("kernels=0,copies=0,allocations=0,runtime_api=0,driver_api=0,sync=0,callbacks=none,"
        "launch_sites=0,region=0")
LADDER = [
    ("plain", None, None),
    ("cupti_raw", [], _OFF + ",kernels=1,timestamp=0,process=0"),
    ("+timestamp", [], _OFF + ",kernels=1,process=0"),
    ("+records", [], _OFF + ",kernels=1"),
    ("+copies", [], _OFF + ",kernels=1,copies=1"),
    ("+callbacks", [], _OFF + ",kernels=1,copies=1,callbacks=launch"),
    ("+roctx", [], _OFF + ",kernels=1,copies=1,callbacks=launch,region=1"),
    ("default", [], None),
    ("sys-trace", ["--sys-trace=true"], None),
    ("sys-trace-all", ["--sys-trace=true", "--runtime-trace-all=true"], None),
]
COUNTERS = None  # ThreadCounters of the child process
RECORD_TABLES = ("kernel_dispatch", "memory_copy", "memory_allocate", "region", "sample")


def options_for(argv):
    import argparse as ap

    from rocprof.cli import run as run_cli

    p = ap.ArgumentParser()
    run_cli.add_parser(p)
    return run_cli.options_from(p.parse_args([*argv, "x.py"]))


def records_in(db: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n = 0
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        if any(t.startswith(f"rocpd_{k}_") for k in RECORD_TABLES):
            n += con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    con.close()
    return n


class ThreadCounters:
    """User-space cycles and instructions of the calling thread (perf_event_open), which other
    tenants of the host and clock changes disturb far less than wall time: the breakdown's
    precise figure. Unavailable (seccomp, perf_event_paranoid 3) -> values None, reason kept."""

    def __init__(self):
        import ctypes
        import struct

        self.why = None
        self.fds = []
        libc = ctypes.CDLL(None, use_errno=True)
        for config in (0, 1):  # PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS
            attr = bytearray(128)
            # type PERF_TYPE_HARDWARE, size, config; flags: exclude_kernel (bit 5), exclude_hv (6)
            struct.pack_into("IIQQQQQ", attr, 0, 0, 128, config, 0, 0, 0, (1 << 5) | (1 << 6))
            buf = (ctypes.c_char * 128).from_buffer(attr)
            fd = libc.syscall(298, buf, 0, -1, -1, 0)  # perf_event_open(attr, this thread, any cpu)
            if fd < 0:
                self.why = f"perf_event_open: {os.strerror(ctypes.get_errno())}"
                self.close()
                return
            self.fds.append(fd)

    def read(self):
        if not self.fds:
            return None
        return [int.from_bytes(os.read(fd, 8), "little") for fd in self.fds]

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


class Workload:
    def __init__(self, name, launches, steps):
        import torch

        self.name, self.torch = name, torch
        dev = torch.device("cuda")
        if name == "launch":
            self.x = torch.zeros(1, device=dev)
            self.units, self.reps = launches, 1
        else:
            import torch_steps as ts

            torch.manual_seed(0)
            if name == "transformer":
                self.model = ts.Transformer().to(dev)
                self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
                self.inp = (torch.randn(16, 128, 64, device=dev), torch.randint(0, 100, (16,), device=dev))
            else:
                self.model = ts.Net().to(dev)
                self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
                self.inp = (torch.randn(128, 3, 32, 32, device=dev), torch.randint(0, 100, (128,), device=dev))
            self.step_fn = ts.step
            self.units, self.reps = steps, 1
        self.run(self.units)  # warm: allocator, cuBLAS handles, autotuning
        torch.cuda.synchronize()

    def run(self, n):
        if self.name == "launch":
            x = self.x
            for _ in range(n):
                x.add_(1.0)
        else:
            for _ in range(n):
                self.step_fn(self.model, self.opt, *self.inp)

    def timed(self, batches=8):
        """Seconds for all units: (the fastest of `batches` equal batches x batches, the whole
        stretch), and the CPU seconds of other threads. The fastest batch is the figure that
        other tenants of the host disturb least."""
        torch = self.torch
        self.run(max(1, self.units // 10))  # the session's own first launches out of the way
        torch.cuda.synchronize()
        per = max(1, self.units // batches)
        best = float("inf")
        cyc = ins = None
        t0, p0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
        for _ in range(batches):
            c0 = COUNTERS.read()
            b0 = time.perf_counter()
            self.run(per)
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - b0)
            c1 = COUNTERS.read()
            if c0 is not None:
                cyc = min(cyc or float("inf"), c1[0] - c0[0])
                ins = min(ins or float("inf"), c1[1] - c0[1])
        t1, p1, m1 = time.perf_counter(), time.process_time(), time.thread_time()
        scale = self.units / per
        self.last_counts = (cyc * scale if cyc else None, ins * scale if ins else None)
        return best * scale, t1 - t0, (p1 - p0) - (m1 - m0)


def child(out_path, launches, steps, workloads, keep_dir):
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)
    from rocprof.session import Session

    global COUNTERS
    COUNTERS = ThreadCounters()
    loads = {name: Workload(name, launches, steps) for name in workloads}
    res = {name: {} for name in workloads}
    tmp = tempfile.mkdtemp(prefix="launch_cost_")
    for label, argv, cupti in LADDER:
        for name, w in loads.items():
            if argv is None:
                best, wall, other = w.timed()
                res[name][label] = {"best": best, "wall": wall, "other_cpu": other,
                                    "cycles": w.last_counts[0], "instructions": w.last_counts[1]}
                continue
            if cupti is not None:
                os.environ["ROCPROF_CUPTI_OPTIONS"] = cupti
            else:
                os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
            opts = options_for(argv)
            opts.output_dir, opts.output_file = tmp, f"{name}_{label.strip('+')}"
            s = Session(opts)
            s.start()
            best, wall, other = w.timed()
            s.stop()
            recs = records_in(s.path)
            res[name][label] = {"best": best, "wall": wall, "other_cpu": other, "records": recs,
                                "cycles": w.last_counts[0], "instructions": w.last_counts[1],
                                "bytes": os.path.getsize(s.path)}
            if keep_dir and label in ("default", "sys-trace", "sys-trace-all"):
                shutil.copy(s.path, os.path.join(keep_dir, f"{name}_{label}.db"))
            os.unlink(s.path)
    os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
    from torch.profiler import ProfilerActivity, profile

    for name, w in loads.items():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            best, wall, other = w.timed()
        res[name]["torch.profiler"] = {"best": best, "wall": wall, "other_cpu": other,
                                       "cycles": w.last_counts[0], "instructions": w.last_counts[1]}
        # Kernels per unit: the "+records" session recorded kernel dispatches only.
        res[name]["_kernels_per_unit"] = res[name]["+records"]["records"] / w.units
        res[name]["_units"] = w.units
    res["_counters"] = COUNTERS.why or "user-space cycles and instructions of the launching thread"
    shutil.rmtree(tmp, ignore_errors=True)
    with open(out_path, "w") as fh:
        json.dump(res, fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=4000)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--workloads", default="launch,transformer,cnn")
    ap.add_argument("--keep", default=None, help="folder for the last round's default and "
                    "sys-trace databases (for benchmarks/gpu_b5_bytes.py)")
    ap.add_argument("--json", default=None, help="write the per-round figures here")
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    workloads = a.workloads.split(",")
    if a.child:
        child(a.child, a.launches, a.steps, workloads, a.keep)
        return
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    rounds = []
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}:{ROOT}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            out = os.path.join(tmp, f"r{r}.json")
            cmd = [sys.executable, __file__, "--child", out, "--launches", str(a.launches),
                   "--steps", str(a.steps), "--workloads", a.workloads]
            if a.keep and r == a.rounds - 1:
                cmd += ["--keep", a.keep]
            subprocess.run(cmd, check=True, env=env)
            with open(out) as fh:
                rounds.append(json.load(fh))
            print(f"round {r + 1}/{a.rounds} done", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rounds, fh)
    report(rounds, workloads)
    if a.keep:
        for name in workloads:
            for label in ("sys-trace", "sys-trace-all"):
                api_mix(os.path.join(a.keep, f"{name}_{label}.db"), name, label)


def api_mix(db, name, label):
    """What the API records of a traced run are: per category and name, calls per kernel."""
    if not os.path.exists(db):
        return
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    (kernels,) = con.execute("SELECT count(*) FROM kernels").fetchone()
    rows = con.execute("SELECT category, name, count(*), sum(duration) FROM regions "
                       "GROUP BY category, name ORDER BY 3 DESC LIMIT 15").fetchall()
    con.close()
    print(f"\n{name} {label}: API records per kernel ({kernels} kernels), top 15")
    print("| category | name | per kernel | mean ns |")
    print("|---|---|---|---|")
    for cat, n, c, d in rows:
        print(f"| {cat} | {n} | {c / max(kernels, 1):.2f} | {d / c:.0f} |")


KEY = "best"  # "wall": the whole stretch instead of its fastest batch


def _added(res, lab):
    return res[lab][KEY] - res["plain"][KEY]


def report(rounds, workloads):
    labels = [lab for lab, _, _ in LADDER] + ["torch.profiler"]
    for name in workloads:
        kpu = statistics.median(r[name]["_kernels_per_unit"] for r in rounds)
        units = rounds[0][name]["_units"]
        kernels = kpu * units
        print(f"\n{name}: {units} {'launches' if name == 'launch' else 'steps'}, "
              f"{kpu:.1f} kernels per {'launch' if name == 'launch' else 'step'}; "
              f"median of {len(rounds)} rounds (min-max) of the fastest of 8 batches, each against "
              f"its own round's plain run")
        print("| variant | us/kernel added | step of the ladder | other threads' CPU us/kernel "
              "| records/kernel | B/record |")
        print("|---|---|---|---|---|---|")
        prev = None
        for lab in labels:
            added = [1e6 * (r[name][lab][KEY] - r[name]["plain"][KEY]) / kernels for r in rounds]
            other = [1e6 * r[name][lab]["other_cpu"] / kernels for r in rounds]
            med = statistics.median(added)
            step = "" if prev is None or lab.startswith(("sys-trace", "torch")) else f"{med - prev:+.2f}"
            recs = [r[name][lab].get("records") for r in rounds]
            rec_s = bpr = ""
            if recs[0] is not None:
                rec_s = f"{statistics.median(recs) / kernels:.2f}"
                bpr = f"{statistics.median(r[name][lab]['bytes'] / max(r[name][lab]['records'], 1) for r in rounds):.0f}"
            if lab == "plain":
                wall = statistics.median(1e6 * r[name]["plain"][KEY] / kernels for r in rounds)
                print(f"| plain | ({wall:.2f} us/kernel in all) | | "
                      f"{statistics.median(other):.2f} | | |")
            else:
                print(f"| {lab} | {med:+.2f} ({min(added):+.2f} to {max(added):+.2f}) | {step} | "
                      f"{statistics.median(other):.2f} | {rec_s} | {bpr} |")
            if not lab.startswith(("plain", "sys-trace", "torch")):
                prev = med
            elif lab == "plain":
                prev = 0.0
        floor = statistics.median(1e6 * _added(r[name], "+records") / kernels for r in rounds)
        dflt = statistics.median(1e6 * _added(r[name], "default") / kernels for r in rounds)
        sys_ = statistics.median(_added(r[name], "sys-trace") / max(_added(r[name], "torch.profiler"), 1e-9)
                                 for r in rounds)
        print(f"default above the floor (+records): {dflt - floor:+.2f} us/kernel (goal <= 0.5); "
              f"sys-trace added / torch.profiler added: {sys_:.2f} (goal <= 0.33)")
        counted(rounds, name, labels, kernels)


def counted(rounds, name, labels, kernels):
    """The same ladder in user-space cycles and instructions of the launching (main) thread."""
    if any(r[name]["plain"].get("cycles") is None for r in rounds):
        print(f"(no thread counters: {rounds[0].get('_counters')})")
        return
    # The main thread's clock during plain batches, to show cycles as microseconds.
    ghz = statistics.median(r[name]["plain"]["cycles"] / r[name]["plain"]["best"] / 1e9 for r in rounds)
    print(f"\n{name}, launching thread only (user-space perf counters, fastest batch; "
          f"{ghz:.2f} GHz while plain){' - backward kernels launch on autograd threads, not counted' if name != 'launch' else ''}")
    print("| variant | cycles/kernel added | as us | step of the ladder (us) | instructions/kernel added |")
    print("|---|---|---|---|---|")
    prev = 0.0
    for lab in labels[1:]:
        cyc = statistics.median((r[name][lab]["cycles"] - r[name]["plain"]["cycles"]) / kernels for r in rounds)
        ins = statistics.median((r[name][lab]["instructions"] - r[name]["plain"]["instructions"]) / kernels
                                for r in rounds)
        us = cyc / ghz / 1e3
        ladder = not lab.startswith(("sys-trace", "torch"))
        print(f"| {lab} | {cyc:+.0f} | {us:+.2f} | {f'{us - prev:+.2f}' if ladder else ''} | {ins:+.0f} |")
        if ladder:
            prev = us


if __name__ == "__main__":
    main()
