"""B3: call-stack sampling slowdown on a CPU-bound pure-Python workload.

Runs the same fixed amount of work as: plain python; `rocprof run` without sampling (the
baseline for the sampler's own cost, so launcher start-up (B7) is not counted twice);
`rocprof run --sample HZ` (CPU mode, then wall mode); py-spy record --rate HZ (--nonblocking,
its cheapest mode) where py-spy can run. Runs are interleaved and repeated; the median wall
time and the median CPU time of the profiled process tree are reported, with the samples taken
vs intended (rocprof metadata: taken / (taken + missed)) and the CPU each sample cost (CPU above
the unsampled run / samples taken). Where a C compiler is found, the floor runs in the same
rounds, interleaved with the rest: the same rates of SIGPROF delivered to an empty handler in
a C loop (benchmarks/data/b3_signal_floor.c), the least any signal-driven sampler adds on this
machine, as rows of the same table (its CPU against the timer-less loop, and per signal).
Where each sample's CPU goes is printed under the table: the workload reads its threads' CPU
clocks as it ends (the sampled main thread: timer signals and the handler; the resolver,
named rocprof-resolve; the others: the storage drain thread), the rest is the process's CPU
after that (the session's stop, its last drain, exit); with the time the resolver held the GIL
(the main thread cannot run Python meanwhile) from the database's metadata.

`--baseline DIR` adds another built checkout's unsampled and CPU-mode sampled runs to the same
rounds (rows tagged "(baseline)", each against that checkout's own unsampled run).

The same-run table puts every sampler beside its own unsampled run of the same round (rocprof's
beside `rocprof run`, py-spy's beside plain python), in three measures: the workload's thread
alone (what py-spy's target pays: py-spy reads from another process), the sampled process
(every thread of it, rocprof's reader, resolver and storage included), and the whole process
tree (py-spy's own process included). Its floors are the signal floor above and the thread
method's: the same C loop with another thread that only wakes at the rate (`thread` mode of
the floor program).

    PYTHONPATH=python:. python3 benchmarks/b3_sampling.py [--repeat 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
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
BASELINE = " (baseline)"

# The B3 work itself (also b3_alternated.py's): recursion and a loop, both pure Python.
WORK_FUNCTIONS = """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def loop(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s
"""

WORKLOAD = "import sys" + WORK_FUNCTIONS + """for _ in range(int(sys.argv[1])):
    fib(20)
    loop(20000)
if len(sys.argv) > 2:  # the threads' CPU so far: main, resolver, reader, others (ns)
    import os, time
    cpu = {"main": 0, "resolver": 0, "reader": 0, "other": 0}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                name = f.read().strip()
            ns = time.clock_gettime_ns(((~int(t)) << 3) | 6)  # the thread's CPU clock
        except OSError:
            continue
        key = ("main" if int(t) == os.getpid() else "resolver" if name == "rocprof-resolve"
               else "reader" if name == "rocprof-reader" else "other")
        cpu[key] += ns
    with open(sys.argv[2], "w") as f:
        f.write(" ".join(str(cpu[k]) for k in ("main", "resolver", "reader", "other")))
"""


def run(cmd, env) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def yield_of(outdir: Path) -> tuple[int, int, float]:
    """(taken, missed, GIL held by the resolver in s) samples of the run's database."""
    dbs = list(outdir.rglob("*.db"))
    if not dbs:
        return 0, 0, 0.0
    with sqlite3.connect(dbs[0]) as c:
        md = dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.sampling.%'"))
    return (int(md.get("rocprof.sampling.samples_taken", 0)),
            int(md.get("rocprof.sampling.samples_missed", 0)),
            int(md.get("rocprof.sampling.gil_held_us", 0)) * 1e-6)


def floor_program(tmp: Path) -> Path | None:
    """benchmarks/data/b3_signal_floor.c built here, or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None
    exe = tmp / "b3_signal_floor"
    subprocess.run([cc, "-O2", "-pthread", str(ROOT / "benchmarks" / "data" / "b3_signal_floor.c"), "-o",
                    str(exe)], check=True)
    return exe


def cpu_list(spec: str) -> set[int]:
    """'2-5,8' -> {2, 3, 4, 5, 8}."""
    cpus: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def quartiles(xs: list[float]) -> str:
    """'median [q1 .. q3]' of per-round figures."""
    if len(xs) < 4:
        return f"{statistics.median(xs):.3f}"
    q1, q2, q3 = statistics.quantiles(xs, n=4)
    return f"{q2:.3f} [{q1:.3f} .. {q3:.3f}]"


def unsampled_of(name: str) -> str:
    """The run a config is measured against: py-spy's is plain python (it runs that)."""
    if name.startswith("py-spy"):
        return "python"
    return "rocprof (no sampling)" + (BASELINE if name.endswith(BASELINE) else "")


def pyspy_samples(raw: Path) -> int:
    """Samples in a py-spy `-f raw` file (one collapsed stack and its count a line)."""
    if not raw.exists():
        return 0
    return sum(int(line.rsplit(" ", 1)[1]) for line in raw.read_text().splitlines() if " " in line)


def same_run_table(configs, results, split, samples) -> None:
    """Each round's sampled run over the same round's unsampled one, in three measures."""
    print("same-run ratios, sampled / unsampled run of the same round, median [quartiles]: the workload's "
          "thread; the sampled process (all its threads); the whole process tree (a sampler's own process "
          "included); samples taken")
    for name in configs:
        own = unsampled_of(name)
        if not samples[name] or len(split[name]) != len(split[own]):
            continue
        main_r = [a[0] / b[0] for a, b in zip(split[name], split[own], strict=True)]
        proc_r = [sum(a[:4]) / sum(b[:4]) for a, b in zip(split[name], split[own], strict=True)]
        tree_r = [a[1] / b[1] for a, b in zip(results[name], results[own], strict=True)]
        taken = statistics.median(t for t, _, _ in samples[name])
        print(f"  {name:49} thread {quartiles(main_r)}  process {quartiles(proc_r)}  "
              f"tree {quartiles(tree_r)}  {taken:.0f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=800, help="workload size (~2 s of CPU on the B3 box)")
    ap.add_argument("--rates", default="1000,10000")
    ap.add_argument("--modes", default="cpu,wall", help="sampling modes of the signal method's rows")
    ap.add_argument("--floor-iterations", type=int, default=300_000_000,
                    help="the floor loop's size (~1 s of CPU on the B3 box)")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another built checkout whose sampled configs run in the same rounds")
    ap.add_argument("--cpus", default=None,
                    help="run every config on these CPUs only (e.g. 2-5; children inherit it): a host "
                         "whose cores differ in speed or load then moves every config alike")
    args = ap.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, cpu_list(args.cpus))
    tmp = Path(tempfile.mkdtemp(prefix="b3_"))
    script = tmp / "work.py"
    script.write_text(WORKLOAD)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}{os.pathsep}{ROOT}")
    py = sys.executable
    n = str(args.iterations)
    threads_out = str(tmp / "threads.txt")
    configs = {"python": [py, str(script), n, threads_out],
               "rocprof (no sampling)": [py, "-m", "rocprof", "run", "-d", str(tmp / "base"), str(script), n,
                                         threads_out]}
    for hz in args.rates.split(","):
        for mode in args.modes.split(","):
            configs[f"rocprof --sample {hz} ({mode})"] = [
                py, "-m", "rocprof", "run", "--sample", hz, "--sampling-mode", mode,
                "-d", str(tmp / f"s{hz}{mode}"), str(script), n, threads_out]
        # The thread method (no signals: a reader thread walks the frames; its CPU is "other").
        configs[f"rocprof --sample {hz} thread (cpu)"] = [
            py, "-m", "rocprof", "run", "--sample", hz, "--sampling-method", "thread",
            "-d", str(tmp / f"s{hz}thread"), str(script), n, threads_out]
    envs = {name: env for name in configs}
    if args.baseline is not None:
        base_root = args.baseline.resolve()
        base_env = dict(os.environ, PYTHONPATH=f"{base_root / 'python'}{os.pathsep}{base_root}")
        # The baseline may predate --sampling-method.
        has_thread = "sampling-method" in (base_root / "python" / "rocprof" / "option_table.py").read_text()
        for name in [k for k in configs if k.startswith("rocprof") and "(wall)" not in k
                     and (has_thread or "thread" not in k)]:
            configs[name + BASELINE] = [a.replace(str(tmp / "s"), str(tmp / "sb")) if "/s" in a else a
                                        for a in configs[name]]
            envs[name + BASELINE] = base_env
    pyspy = shutil.which("py-spy")
    if pyspy:
        for hz in args.rates.split(","):
            configs[f"py-spy --rate {hz}"] = [pyspy, "record", "--nonblocking", "--rate", hz, "-f", "raw",
                                              "-o", str(tmp / f"pyspy{hz}.txt"), "--", py, str(script), n,
                                              threads_out]
    rates = args.rates.split(",")
    floor = floor_program(tmp)
    # The floor's loop: about as much CPU as the workload (its own rounds, same repeats).
    floor_n = str(args.floor_iterations)
    floors = {hz: [str(floor), hz, floor_n] for hz in ["0", *rates]} if floor else {}
    if floor:  # the thread method's floor: a thread that only wakes at the rate
        floors.update({f"{hz} thread": [str(floor), hz, floor_n, "thread"] for hz in rates})
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    samples: dict[str, list[tuple[int, int, float]]] = {k: [] for k in configs}
    # CPU s of (main, resolver, reader, other threads, after the workload) per run.
    split: dict[str, list[tuple[float, ...]]] = {k: [] for k in configs}
    floor_cpu: dict[str, list[float]] = {hz: [] for hz in floors}
    floor_signals: dict[str, list[int]] = {hz: [] for hz in floors}
    load_before = os.getloadavg()[0]
    for _ in range(args.repeat):
        for name, cmd in configs.items():  # interleaved: load drifts hit every config alike
            for d in tmp.glob("s*"):
                if d.is_dir():
                    shutil.rmtree(d)
            results[name].append(run(cmd, envs.get(name, env)))
            if os.path.exists(threads_out):
                ns = [int(x) * 1e-9 for x in Path(threads_out).read_text().split()]
                os.unlink(threads_out)
                split[name].append((*ns, results[name][-1][1] - sum(ns)))
            if name.startswith("rocprof --sample"):
                samples[name].append(yield_of(Path(cmd[cmd.index("-d") + 1])))
            elif name.startswith("py-spy"):
                samples[name].append((pyspy_samples(Path(cmd[cmd.index("-o") + 1])), 0, 0.0))
        for hz, cmd in floors.items():
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
            floor_cpu[hz].append(float(out[0]))
            floor_signals[hz].append(int(out[1]))
    base_wall = statistics.median(w for w, _ in results["rocprof (no sampling)"])
    base_cpu = statistics.median(c for _, c in results["rocprof (no sampling)"])
    py_wall = statistics.median(w for w, _ in results["python"])
    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}; repeat {args.repeat}; "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'config':51} {'wall s':>8} {'cpu s':>8} {'wall/base':>10} {'cpu/base':>9} "
          f"{'wall/python':>11}  samples (CPU per sample)")
    for name in configs:
        w = statistics.median(x for x, _ in results[name])
        c = statistics.median(y for _, y in results[name])
        own = unsampled_of(name)
        base_wall = statistics.median(x for x, _ in results[own])
        base_cpu = statistics.median(y for _, y in results[own])
        note = "-"
        if samples[name]:
            taken = statistics.median(t for t, _, _ in samples[name])
            missed = statistics.median(m for _, m, _ in samples[name])
            note = (f"{100.0 * taken / max(1, taken + missed):.1f}% ({taken:.0f} taken; "
                    f"{1e6 * (c - base_cpu) / max(1, taken):.1f} us)")
        print(f"{name:51} {w:8.3f} {c:8.3f} {w / base_wall:10.3f} {c / base_cpu:9.3f} "
              f"{w / py_wall:11.3f}  {note}")
    # Each round's run against the same round's unsampled run (they ran back to back), and the
    # fastest run against the fastest: on a host whose speed swings between rounds these move
    # less than the ratio of medians above.
    print("per-round ratios against the same round's unsampled run: median [quartiles]; fastest / fastest")
    for name in configs:
        if not samples[name]:
            continue
        own = unsampled_of(name)
        pairs = list(zip(results[name], results[own], strict=True))
        wall_r = [w / bw for (w, _), (bw, _) in pairs]
        cpu_r = [c / bc for (_, c), (_, bc) in pairs]
        fastest = min(c for _, c in results[name]) / min(c for _, c in results[own])
        print(f"  {name:49} wall {quartiles(wall_r)}  cpu {quartiles(cpu_r)}  fastest cpu {fastest:.3f}")
    if split["rocprof (no sampling)"]:
        print("CPU per sample above the unsampled run, us (medians): main thread (signals, handler), "
              "resolver thread, reader thread, other threads (storage), after the workload (stop, exit; "
              "py-spy: its own process); GIL held by the resolver")
        for name in configs:
            if not samples[name] or not split[name]:
                continue
            own = unsampled_of(name)
            if not split[own]:
                continue
            base_split = [statistics.median(x[i] for x in split[own]) for i in range(5)]
            taken = max(1.0, statistics.median(t for t, _, _ in samples[name]))
            parts = [1e6 * (statistics.median(x[i] for x in split[name]) - base_split[i]) / taken
                     for i in range(5)]
            gil = 1e6 * statistics.median(g for _, _, g in samples[name]) / taken
            print(f"  {name:49} main {parts[0]:6.1f}  resolver {parts[1]:5.1f}  reader {parts[2]:5.1f}  "
                  f"other {parts[3]:5.1f}  after {parts[4]:6.1f}  GIL held {gil:5.2f}")
        same_run_table(configs, results, split, samples)
    if not floors:
        print("signal floor: no C compiler here, not measured")
    else:
        for hz in [h for h in floors if h != "0"]:
            rounds = [c / c0 for c, c0 in zip(floor_cpu[hz], floor_cpu["0"], strict=True)]
            c, k = statistics.median(floor_cpu[hz]), statistics.median(floor_signals[hz])
            base = statistics.median(floor_cpu["0"])
            what = (f"a thread waking at {hz.split()[0]} Hz (floor, C)" if "thread" in hz
                    else f"empty SIGPROF handler {hz} Hz (floor, C)")
            print(f"{what:51} {'':8} {c:8.3f} {'':10} {c / base:9.3f} {'':11}  {k:.0f} "
                  f"{'wake-ups' if 'thread' in hz else 'signals'} ({1e6 * (c - base) / max(1, k):.1f} us); "
                  f"per round {quartiles(rounds)}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
