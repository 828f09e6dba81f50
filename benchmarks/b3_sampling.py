"""B3: call-stack sampling slowdown on a CPU-bound pure-Python workload.

Runs the same fixed amount of work as: plain python; `rocprof run` without sampling (the
baseline for the sampler's own cost, so launcher start-up (B7) is not counted twice);
`rocprof run --sample HZ` (CPU mode, then wall mode); py-spy record --rate HZ (--nonblocking,
its cheapest mode) where py-spy can run. Runs are interleaved and repeated; the median wall
time and the median CPU time of the profiled process tree are reported, with the samples taken
vs intended (rocprof metadata: taken / (taken + missed)). Where a C compiler is found, the
floor is printed too: the same rates of SIGPROF delivered to an empty handler in a C loop
(benchmarks/data/b3_signal_floor.c), the least any signal-driven sampler adds on this machine.

    PYTHONPATH=python:. python3 benchmarks/b3_sampling.py [--repeat 5] [--work 2.0]
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

WORKLOAD = """
import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def loop(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s
for _ in range(int(sys.argv[1])):
    fib(20)
    loop(20000)
"""


def run(cmd, env) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def yield_of(outdir: Path) -> str:
    dbs = list(outdir.rglob("*.db"))
    if not dbs:
        return "-"
    with sqlite3.connect(dbs[0]) as c:
        md = dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.sampling.%'"))
    taken, missed = int(md.get("rocprof.sampling.samples_taken", 0)), int(md.get("rocprof.sampling.samples_missed", 0))
    return f"{100.0 * taken / max(1, taken + missed):.1f}% ({taken} taken)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=800, help="workload size (~2 s of CPU on the B3 box)")
    ap.add_argument("--rates", default="1000,10000")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="b3_"))
    script = tmp / "work.py"
    script.write_text(WORKLOAD)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}{os.pathsep}{ROOT}")
    py = sys.executable
    n = str(args.iterations)
    configs = {"python": [py, str(script), n],
               "rocprof (no sampling)": [py, "-m", "rocprof", "run", "-d", str(tmp / "base"), str(script), n]}
    for hz in args.rates.split(","):
        for mode in ("cpu", "wall"):
            configs[f"rocprof --sample {hz} ({mode})"] = [
                py, "-m", "rocprof", "run", "--sample", hz, "--sampling-mode", mode,
                "-d", str(tmp / f"s{hz}{mode}"), str(script), n]
    pyspy = shutil.which("py-spy")
    if pyspy:
        for hz in args.rates.split(","):
            configs[f"py-spy --rate {hz}"] = [pyspy, "record", "--nonblocking", "--rate", hz, "-f", "raw",
                                              "-o", str(tmp / f"pyspy{hz}.txt"), "--", py, str(script), n]
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    for _ in range(args.repeat):
        for name, cmd in configs.items():  # interleaved: load drifts hit every config alike
            for d in tmp.glob("s*"):
                if d.is_dir():
                    shutil.rmtree(d)
            results[name].append(run(cmd, env))
            if name.startswith("rocprof --sample"):
                results[name + "#yield"] = [yield_of(tmp / ("s" + name.split()[2] + name.split("(")[1][:-1]))]
    base_wall = statistics.median(w for w, _ in results["rocprof (no sampling)"])
    base_cpu = statistics.median(c for _, c in results["rocprof (no sampling)"])
    py_wall = statistics.median(w for w, _ in results["python"])
    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}; repeat {args.repeat}")
    print(f"{'config':32} {'wall s':>8} {'cpu s':>8} {'wall/base':>10} {'cpu/base':>9} {'wall/python':>11}  samples")
    for name in configs:
        w = statistics.median(x for x, _ in results[name])
        c = statistics.median(y for _, y in results[name])
        y = results.get(name + "#yield", ["-"])[0]
        print(f"{name:32} {w:8.3f} {c:8.3f} {w / base_wall:10.3f} {c / base_cpu:9.3f} {w / py_wall:11.3f}  {y}")
    print_floor(tmp, args.rates.split(","), args.repeat)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def print_floor(tmp: Path, rates: list[str], repeat: int) -> None:
    """The CPU time an empty SIGPROF handler adds at each rate (median of interleaved runs)."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        print("signal floor: no C compiler here, not measured")
        return
    exe = tmp / "b3_signal_floor"
    subprocess.run([cc, "-O2", str(ROOT / "benchmarks" / "data" / "b3_signal_floor.c"), "-o",
                    str(exe)], check=True)
    n = "300000000"
    cpu: dict[str, list[float]] = {hz: [] for hz in ["0", *rates]}
    signals: dict[str, list[int]] = {hz: [] for hz in cpu}
    for _ in range(max(3, repeat)):
        for hz in cpu:
            out = subprocess.run([str(exe), hz, n], check=True, capture_output=True, text=True)
            cpu[hz].append(float(out.stdout.split()[0]))
            signals[hz].append(int(out.stdout.split()[1]))
    base = statistics.median(cpu["0"])
    for hz in rates:
        c, k = statistics.median(cpu[hz]), statistics.median(signals[hz])
        print(f"signal floor {hz:>6} Hz: an empty SIGPROF handler costs {c / base:.3f}x the "
              f"loop's CPU ({1e6 * (c - base) / max(1, k):.1f} us per signal, {k:.0f} signals)")


if __name__ == "__main__":
    raise SystemExit(main())
