"""Tracing costs on the GPU host from batches a moment apart: the torch observer split into
PyTorch's floor and its own work, and `--sys-trace` split into CUPTI's part and ours.

The ladder (gpu_launch_cost.py) times each rung over 8 batches in a session of its own, seconds
from the plain run it is compared with; on the H200 host its quartiles span +-5 us per kernel,
more than most rungs. Here each round times one short batch (a few training steps) per setting,
back to back, the order reversed every other round, and each batch is compared with the batch
of its own round. Two parts, per workload:

Observer (one default session kept open; the settings switched between batches):
  none      the observer detached: launch sites only (the ladder's "+sites")
  floor     the observer detached, an empty global RecordFunction callback on every op
            registered as the observer's forward one is (rocprof._torch_observer._floor_callback):
            what PyTorch itself charges any observer of every op
  observer  the observer attached (the default)

Sessions (a session started and stopped around each batch; start and stop are not timed):
  plain      no session
  cupti_raw  CUPTI kernel activity only, buffers handed back unread (CUPTI's own floor)
  cupti_sys  CUPTI with --sys-trace's activities (kernels, copies, sets, allocations, runtime
             and driver API, synchronization), no callbacks of ours, buffers handed back unread
  default    `rocprof run`
  sys-trace  `rocprof run --sys-trace`
  then torch.profiler (CPU+CUDA) alternated with plain batches of its own (last: it keeps CUPTI
  to itself once used).

Reported in us per kernel (and ns per RecordFunction op for the observer), median [quartiles]
over rounds.

    python3 benchmarks/gpu_paired_cost.py [--rounds 40] [--steps 4] [--workloads transformer,cnn]
        [--parts observer,sessions] [--json FILE]; --report FILE prints an earlier --json's tables
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from gpu_launch_cost import (
    _OFF,
    Workload,
    _q,
    ops_per_unit,
    options_for,
    records_in,
    torch_observer,
)

OBSERVER = ("none", "floor", "observer")
SESSIONS = {
    "plain": None,
    "cupti_raw": ([], _OFF + ",kernels=1,timestamp=0,process=0"),
    "cupti_sys": ([], "kernels=1,copies=1,sets=1,allocations=1,runtime_api=1,driver_api=1,sync=1,"
                      "callbacks=none,launch_sites=0,region=0,timestamp=0,process=0"),
    "default": ([], None),
    "sys-trace": (["--sys-trace=true"], None),
    # --sys-trace less one of its parts (for where its cost goes; not user settings):
    # no allocations (the runtime's and PyTorch's caching allocator's), no driver API records,
    # ENTER callbacks on launches only (synchronisations then lack their thread).
    "sys-noalloc": (["--runtime-trace=true", "--kernel-trace=true", "--memory-copy-trace=true",
                     "--marker-trace=true"], None),
    "sys-nodriver": (["--sys-trace=true"], "driver_api=0"),
    "sys-launchcb": (["--sys-trace=true"], "callbacks=launch"),
}
DEFAULT_SESSIONS = "plain,cupti_raw,cupti_sys,default,sys-trace"


def batch(w, steps):
    w.run(1)  # the switch's own first step out of the way
    w.torch.cuda.synchronize()
    t0 = time.perf_counter()
    w.run(steps)
    w.torch.cuda.synchronize()
    return time.perf_counter() - t0


def session(w, label, tmp):
    from rocprof.session import Session

    argv, cupti = SESSIONS[label]
    if cupti is None:
        os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
    else:
        os.environ["ROCPROF_CUPTI_OPTIONS"] = cupti
    opts = options_for(argv)
    opts.output_dir, opts.output_file = tmp, f"{w.name}_{label}"
    s = Session(opts)
    s.start()
    os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)
    return s


def observer_part(w, rounds, steps, tmp):
    from rocprof import _core

    obs = torch_observer()
    api = _core._launch_site_api()
    s = session(w, "default", tmp)
    times = {c: [] for c in OBSERVER}
    try:
        for i in range(rounds):
            for config in (OBSERVER if i % 2 == 0 else OBSERVER[::-1]):
                if config == "observer":
                    obs._floor_callback(False)
                    obs.attach(api)
                else:
                    obs.detach()
                    obs._floor_callback(config == "floor")
                times[config].append(batch(w, steps))
    finally:
        obs._floor_callback(False)
        obs.attach(api)
        s.stop()
        os.unlink(s.path)
    return times


def sessions_part(w, rounds, steps, tmp, labels):
    times = {c: [] for c in labels}
    for i in range(rounds):
        for label in (labels if i % 2 == 0 else labels[::-1]):
            if SESSIONS[label] is None:
                times[label].append(batch(w, steps))
                continue
            s = session(w, label, tmp)
            times[label].append(batch(w, steps))
            s.stop()
            os.unlink(s.path)
    return times


def profiler_part(w, rounds, steps):
    from torch.profiler import ProfilerActivity, profile

    times = {"plain/tp": [], "torch.profiler": []}
    for i in range(rounds):
        for label in (("plain/tp", "torch.profiler") if i % 2 == 0 else ("torch.profiler", "plain/tp")):
            if label == "plain/tp":
                times[label].append(batch(w, steps))
            else:
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                    times[label].append(batch(w, steps))
    return times


def kernels_per_step(w, tmp):
    os.environ["ROCPROF_CUPTI_OPTIONS"] = _OFF + ",kernels=1"
    try:
        opts = options_for([])
        opts.output_dir, opts.output_file = tmp, f"{w.name}_kernels"
        from rocprof.session import Session

        s = Session(opts)
        s.start()
        w.run(5)
        w.torch.cuda.synchronize()
        s.stop()
        n = records_in(s.path) / 5
        os.unlink(s.path)
        return n
    finally:
        os.environ.pop("ROCPROF_CUPTI_OPTIONS", None)


def diffs(times, hi, lo, scale):
    return [scale * (x - y) for x, y in zip(times[hi], times[lo], strict=True)]


def report(out):
    for name, r in out.items():
        kpu, opu, steps = r["kernels_per_step"], r["ops_per_step"], r["steps"]
        scale = 1e6 / (kpu * steps)  # seconds per batch -> us per kernel
        t = r["times"]
        rounds = len(next(iter(t.values())))
        print(f"\n{name}: {kpu:.1f} kernels and {opu or 0:.0f} RecordFunction ops per step; "
              f"{rounds} rounds of {steps}-step batches")
        print("| difference | us per kernel, median [quartiles] | ns per op |")
        print("|---|---|---|")
        rows = [("observer: floor - none (PyTorch's)", "floor", "none"),
                ("observer: observer - floor (ours)", "observer", "floor"),
                ("observer: observer - none", "observer", "none"),
                ("cupti_raw - plain (CUPTI's kernel floor)", "cupti_raw", "plain"),
                ("cupti_sys - plain (CUPTI's --sys-trace floor)", "cupti_sys", "plain"),
                ("default - plain", "default", "plain"),
                ("sys-trace - plain", "sys-trace", "plain"),
                ("sys-trace - default", "sys-trace", "default"),
                ("sys-trace - cupti_sys (ours under --sys-trace)", "sys-trace", "cupti_sys"),
                ("torch.profiler - plain", "torch.profiler", "plain/tp"),
                ("sys-trace - sys-noalloc (allocations)", "sys-trace", "sys-noalloc"),
                ("sys-trace - sys-nodriver (driver API records)", "sys-trace", "sys-nodriver"),
                ("sys-trace - sys-launchcb (callbacks on waits)", "sys-trace", "sys-launchcb")]
        meds = {}
        for lab, hi, lo in rows:
            if hi not in t or lo not in t:
                continue
            q1, med, q3 = _q(diffs(t, hi, lo, scale))
            meds[(hi, lo)] = med
            per_op = f"{1e3 * med * kpu / opu:+.0f}" if opu and lab.startswith("observer") else ""
            print(f"| {lab} | {med:+.2f} [{q1:+.2f}, {q3:+.2f}] | {per_op} |")
        if ("sys-trace", "plain") in meds and ("torch.profiler", "plain/tp") in meds:
            print(f"sys-trace added / torch.profiler added: "
                  f"{meds[('sys-trace', 'plain')] / max(meds[('torch.profiler', 'plain/tp')], 1e-9):.2f}")
        if "plain" in t:
            print(f"plain: {1e3 * statistics.median(t['plain']) / steps:.2f} ms per step")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--workloads", default="transformer,cnn")
    ap.add_argument("--parts", default="observer,sessions")
    ap.add_argument("--sessions", default=DEFAULT_SESSIONS,
                    help=f"the sessions part's settings, of {', '.join(SESSIONS)}")
    ap.add_argument("--json", default=None)
    ap.add_argument("--report", default=None, metavar="JSON")
    a = ap.parse_args()
    if a.report:
        with open(a.report) as fh:
            report(json.load(fh))
        return
    import torch  # noqa: F401  (first: CUPTI from the PyTorch wheel is the one loaded)

    parts = a.parts.split(",")
    if "observer" in parts and torch_observer() is None:
        sys.exit("gpu_paired_cost: this build or this torch has no rocprof._torch_observer")
    out = {}
    loads = {name: Workload(name, 0, a.steps) for name in a.workloads.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        for name, w in loads.items():
            out[name] = {"kernels_per_step": kernels_per_step(w, tmp), "ops_per_step": ops_per_unit(w),
                         "steps": a.steps, "times": {}}
            if "observer" in parts:
                out[name]["times"].update(observer_part(w, a.rounds, a.steps, tmp))
            if "sessions" in parts:
                out[name]["times"].update(sessions_part(w, a.rounds, a.steps, tmp,
                                                       a.sessions.split(",")))
        # torch.profiler last, for every workload: it keeps CUPTI once used.
        if "sessions" in parts:
            for name, w in loads.items():
                out[name]["times"].update(profiler_part(w, a.rounds, a.steps))
    report(out)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh)


if __name__ == "__main__":
    main()
