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
  +sites        + the Python launch site (backward kernels: their backward() call's line)
  default       + backward kernels named by their forward op (rocprof._torch_observer: a
                RecordFunction callback on every op): `rocprof run` with no tracing flag
  sys-trace     `rocprof run --sys-trace`
  sys-trace-all   the same with --runtime-trace-all (cudaGetDevice & co. recorded too)
  torch.profiler  CPU+CUDA activities (last: it keeps CUPTI to itself once used)

Workloads: "launch" (N launches of a one-element in-place add: the launch path alone),
"transformer" and "cnn" (tests/gpu/workloads/torch_steps.py's training steps; kernels per step are
those the "+records" session recorded, which records kernel dispatches only). Reported per
workload and variant: the median over rounds of the time added per kernel over the round's
plain run (in us), of the CPU time of threads other than the launching one (drain, CUPTI's
and the resolver's threads) per kernel, and records and bytes on disk per record.

  python3 benchmarks/gpu_launch_cost.py [--rounds 2] [--inner 6] [--launches 20000] [--steps 40]
      [--keep DIR] [--json FILE]; --report FILE [--figure wall] prints the tables of a --json file
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT), str(ROOT / "tests/gpu/workloads"),
                str(ROOT / "benchmarks")]

_OFF = ("kernels=0,copies=0,sets=0,allocations=0,runtime_api=0,driver_api=0,sync=0,callbacks=none,"
        "launch_sites=0,region=0")
LADDER = [
    ("plain", None, None),
    ("cupti_raw", [], _OFF + ",kernels=1,timestamp=0,process=0"),
    ("+timestamp", [], _OFF + ",kernels=1,process=0"),
    ("+records", [], _OFF + ",kernels=1"),
    ("+copies", [], _OFF + ",kernels=1,copies=1,sets=1"),
    ("+callbacks", [], _OFF + ",kernels=1,copies=1,sets=1,callbacks=launch"),
    ("+roctx", [], _OFF + ",kernels=1,copies=1,sets=1,callbacks=launch,region=1"),
    ("+sites", [], None),  # the default with the torch observer detached (see child())
    ("default", [], None),
    ("sys-trace", ["--sys-trace=true"], None),
    ("sys-trace-all", ["--sys-trace=true", "--runtime-trace-all=true"], None),
]
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
        stretch), the CPU seconds of other threads, and the launching thread's own CPU seconds
        and context switches (voluntary: it waited, e.g. on a lock; involuntary: it was
        preempted). The fastest batch is the figure that other tenants of the host disturb
        least; the launching thread's CPU is what a launch-bound step is made of."""
        torch = self.torch
        self.run(max(1, self.units // 10))  # the session's own first launches out of the way
        torch.cuda.synchronize()
        per = max(1, self.units // batches)
        best = float("inf")
        r0 = resource.getrusage(resource.RUSAGE_THREAD)
        t0, p0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
        for _ in range(batches):
            b0 = time.perf_counter()
            self.run(per)
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - b0)
        t1, p1, m1 = time.perf_counter(), time.process_time(), time.thread_time()
        r1 = resource.getrusage(resource.RUSAGE_THREAD)
        return {"best": best * self.units / per, "wall": t1 - t0, "other_cpu": (p1 - p0) - (m1 - m0),
                "self_cpu": m1 - m0, "vcsw": r1.ru_nvcsw - r0.ru_nvcsw,
                "ivcsw": r1.ru_nivcsw - r0.ru_nivcsw}


def hot_path():
    """Our own parts of the ENTER callback, timed in a tight loop on this CPU (no GPU needed):
    the launch-site capture at three Python stack depths, and the ROCTx range lookup."""
    import roctx
    from rocprof import _core

    def nest(depth, fn):
        return fn() if depth == 0 else nest(depth - 1, fn)

    _core._launch_sites_start()
    out = {}
    try:
        with roctx.range("hot_path"):
            for depth in (0, 20, 60):
                out[depth] = nest(depth, lambda: _core._hot_path_ns(200_000))
    finally:
        _core._launch_sites_stop()
    return out


def torch_observer():
    """rocprof._torch_observer, or None where this build or this torch has none."""
    from rocprof.capture import autograd_sites

    if autograd_sites.observer_unavailable():
        return None
    from rocprof import _torch_observer

    return _torch_observer


def ops_per_unit(w) -> float | None:
    """RecordFunction ops (every aten op, nested ones too, and autograd node) per step: what the
    torch observer's callback runs on."""
    from rocprof import _core

    obs = torch_observer()
    if obs is None or w.name == "launch":
        return None
    _core._launch_sites_start()
    obs.attach(_core._launch_site_api())
    obs._debug_start(1 << 18)
    w.run(1)
    n = len(obs._debug_stop())
    _core._launch_sites_stop()
    return float(n)


def child(out_path, launches, steps, workloads, keep_dir, inner):
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)
    from rocprof import _core
    from rocprof.session import Session

    hot = hot_path()
    loads = {name: Workload(name, launches, steps) for name in workloads}
    ops = {name: ops_per_unit(w) for name, w in loads.items()}
    res = {name: {lab: [] for lab, _, _ in LADDER} for name in workloads}
    tmp = tempfile.mkdtemp(prefix="launch_cost_")
    for i in range(inner):  # the ladder forwards, then backwards: a drift cancels out
        for label, argv, cupti in (LADDER if i % 2 == 0 else LADDER[::-1]):
            for name, w in loads.items():
                if argv is None:
                    res[name][label].append(w.timed())
                    continue
                if cupti is not None:
                    os.environ["ROCPROF_CUPTI_OPTIONS"] = cupti
                else:
                    os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
                opts = options_for(argv)
                opts.output_dir, opts.output_file = tmp, f"{name}_{label.strip('+')}"
                s = Session(opts)
                s.start()
                obs = torch_observer() if label == "+sites" else None
                if obs is not None:
                    obs.detach()
                m = w.timed()
                s.stop()
                if obs is not None:
                    obs.attach(_core._launch_site_api())  # on again with the next session
                m.update(records=records_in(s.path), bytes=os.path.getsize(s.path))
                res[name][label].append(m)
                if keep_dir and label in ("default", "sys-trace", "sys-trace-all"):
                    shutil.copy(s.path, os.path.join(keep_dir, f"{name}_{label}.db"))
                os.unlink(s.path)
    os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
    from torch.profiler import ProfilerActivity, profile

    # torch.profiler last (it keeps CUPTI once used), alternated with plain runs of its own.
    for name, w in loads.items():
        res[name]["plain/tp"], res[name]["torch.profiler"] = [], []
        for _ in range(max(2, inner // 2)):
            res[name]["plain/tp"].append(w.timed())
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                res[name]["torch.profiler"].append(w.timed())
        # Kernels per unit: the "+records" sessions recorded kernel dispatches only.
        res[name]["_kernels_per_unit"] = res[name]["+records"][0]["records"] / w.units
        res[name]["_units"] = w.units
        res[name]["_ops_per_unit"] = ops[name]
    res["_hot_path"] = hot
    shutil.rmtree(tmp, ignore_errors=True)
    with open(out_path, "w") as fh:
        json.dump(res, fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2, help="processes")
    ap.add_argument("--inner", type=int, default=5, help="ladder rounds per process")
    ap.add_argument("--launches", type=int, default=4000)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--workloads", default="launch,transformer,cnn")
    ap.add_argument("--keep", default=None, help="folder for the last round's default and "
                    "sys-trace databases (for benchmarks/gpu_b5_bytes.py)")
    ap.add_argument("--json", default=None, help="write the per-round figures here")
    ap.add_argument("--b5", default=None, metavar="DIR",
                    help="also B5 in DIR: `rocprof run` (default, --sys-trace) of the cnn for 200 "
                         "steps and the transformer for 100, bytes per record and per table "
                         "(benchmarks/gpu_b5_bytes.py) and the share of kernels with a Python line")
    ap.add_argument("--report", default=None, metavar="JSON",
                    help="only print the tables of an earlier --json file")
    ap.add_argument("--figure", choices=("best", "wall"), default="best",
                    help="best: the fastest of 8 batches per measurement; wall: the whole stretch")
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    global KEY
    KEY = a.figure
    workloads = a.workloads.split(",")
    if a.report:
        with open(a.report) as fh:
            report(json.load(fh), workloads)
        return
    if a.child:
        child(a.child, a.launches, a.steps, workloads, a.keep, a.inner)
        return
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    rounds = []
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}:{ROOT}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            out = os.path.join(tmp, f"r{r}.json")
            cmd = [sys.executable, __file__, "--child", out, "--launches", str(a.launches),
                   "--steps", str(a.steps), "--workloads", a.workloads, "--inner", str(a.inner)]
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
    if a.b5:
        b5(a.b5, env)


def b5(folder, env):
    """B5 on the B2 workloads, in processes of their own as a user runs them."""
    import gpu_b5_bytes

    from rocpd import _schema

    os.makedirs(folder, exist_ok=True)
    workload = ROOT / "tests/gpu/workloads/torch_steps.py"
    for model, steps in (("cnn", 200), ("transformer", 100)):
        for flags in ([], ["--sys-trace"]):
            name = f"{model}{'_sys' if flags else ''}"
            subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", folder, "-o", name, *flags,
                            str(workload), "--model", model, "--steps", str(steps), "--warmup", "30"],
                           check=True, env=env, stdout=subprocess.DEVNULL)
            db = os.path.join(folder, f"{name}_results.db")
            print(f"\nB5, {model} {steps} steps, {'--sys-trace' if flags else 'default'}:")
            gpu_b5_bytes.report(db)
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            k, lines = con.execute(
                f"SELECT count(*), total(COALESCE({_schema.line_info_sql('E')}, '{{}}') != '{{}}') "
                "FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id").fetchone()
            con.close()
            print(f"  kernels with a Python line: {100 * lines / max(k, 1):.1f} % of {k}")


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


def _deltas(rounds, name, lab, base="plain"):
    """us added per kernel, one per ladder round of every process, each against the plain run
    of the same ladder round."""
    out = []
    for r in rounds:
        kernels = r[name]["_kernels_per_unit"] * r[name]["_units"]
        out += [1e6 * (m[KEY] - p[KEY]) / kernels for m, p in zip(r[name][lab], r[name][base], strict=True)]
    return out


def _q(xs):
    xs = sorted(xs)
    return xs[len(xs) // 4], statistics.median(xs), xs[(3 * len(xs)) // 4]


def report(rounds, workloads):
    labels = [lab for lab, _, _ in LADDER]
    hot = rounds[0]["_hot_path"]
    print("\nOur own ENTER-callback work, timed in a loop on this CPU (ns per launch): launch-site "
          "capture at Python stack depth " + ", ".join(f"{d}: {v['launch_site_ns']:.0f}" for d, v in hot.items())
          + f"; ROCTx range lookup {hot['0']['roctx_range_ns']:.1f}")
    for name in workloads:
        kpu = statistics.median(r[name]["_kernels_per_unit"] for r in rounds)
        units = rounds[0][name]["_units"]
        n = sum(len(r[name]["plain"]) for r in rounds)
        unit = "launch" if name == "launch" else "step"
        print(f"\n{name}: {units} {unit}{'es' if unit == 'launch' else 's'} per measurement, {kpu:.1f} kernels per {unit}; {n} ladder "
              f"rounds ({len(rounds)} processes): median (quartiles) of "
              f"{'the fastest of 8 batches' if KEY == 'best' else 'the whole stretch'} per measurement, "
              f"each against the plain run of its own round")
        print("| variant | us/kernel added | step of the ladder | other threads' CPU us/kernel "
              "| records/kernel | B/record |")
        print("|---|---|---|---|---|---|")
        plain = statistics.median(1e6 * m[KEY] / (r[name]["_kernels_per_unit"] * r[name]["_units"])
                                  for r in rounds for m in r[name]["plain"])
        print(f"| plain | ({plain:.2f} us/kernel in all) | | | | |")
        prev = 0.0
        meds = {}
        for lab in labels[1:] + ["torch.profiler"]:
            d = _deltas(rounds, name, lab, "plain/tp" if lab == "torch.profiler" else "plain")
            lo, med, hi = _q(d)
            meds[lab] = med
            ladder = not lab.startswith(("sys-trace", "torch"))
            ms = [m for r in rounds for m in r[name][lab]]
            other = statistics.median(1e6 * m["other_cpu"] / (kpu * units) for m in ms)
            rec_s = bpr = ""
            if "records" in ms[0]:
                rec_s = f"{statistics.median(m['records'] for m in ms) / (kpu * units):.2f}"
                bpr = f"{statistics.median(m['bytes'] / max(m['records'], 1) for m in ms):.0f}"
            print(f"| {lab} | {med:+.2f} ({lo:+.2f} to {hi:+.2f}) | {f'{med - prev:+.2f}' if ladder else ''} "
                  f"| {other:.2f} | {rec_s} | {bpr} |")
            if ladder:
                prev = med
        opu = rounds[0][name].get("_ops_per_unit")
        if opu and "+sites" in meds:
            links = meds["default"] - meds["+sites"]
            print(f"backward kernels named by their forward op (default - +sites): {links:+.2f} "
                  f"us/kernel = {1e3 * links * kpu / opu:+.0f} ns per op ({opu:.0f} RecordFunction "
                  f"ops per {unit}; goal <= 1000 ns)")
        print(f"default above the floor (+records): {meds['default'] - meds['+records']:+.2f} us/kernel "
              f"(goal <= 0.5); sys-trace added / torch.profiler added: "
              f"{meds['sys-trace'] / max(meds['torch.profiler'], 1e-9):.2f} (goal <= 0.33)")

if __name__ == "__main__":
    main()
