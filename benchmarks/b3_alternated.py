"""B3 in one run: the sampled thread's speed with the sampler's signals delivered vs blocked.

`b3_sampling.py` compares whole runs. On a host whose cores change speed by several per cent
from one second to the next, independently of each other (the GPU host: ±8 % between 2.5 s
runs of the same program on one pinned core), whole-run ratios cannot resolve the 1 % and 5 %
goals. Here one `rocprof run --sample HZ` process runs the B3 workload in short segments,
alternating: SIGPROF blocked on the thread (the timer's signal stays pending: no delivery, no
handler, no sample) and SIGPROF delivered (sampled); under `--sampling-method thread`, which
sends no signal, the profiler paused (roctxProfilerPause: its reader walks nothing) and
resumed. Each pair of neighbouring segments ran
within milliseconds on the same core, so the host's drift cancels in their ratio. The same
script under plain python (no sampler: blocking changes nothing) is the method's control; its
ratio shows the resolution. The floor is the same alternation in a plain python process whose
SIGPROF comes from a timer armed as the sampler arms its own (per thread, CLOCK_MONOTONIC, the
same rate) and goes to a C handler that does nothing: what any in-process signal sampler pays
on this machine before it does any work. (A periodic POSIX timer whose signal is pending is not
re-armed until the signal is taken, so a blocked half has no timer interrupts either.)

What a pair's ratio contains: the timer interrupts, signal delivery, our handler, the GIL the
resolver takes, cache effects of the other threads — the slowdown of the sampled program. What
it leaves out: the resolver's and storage thread's CPU on other cores (`b3_sampling.py`'s
per-thread split has those).

    PYTHONPATH=python:. python3 benchmarks/b3_alternated.py [--pairs 200] [--cpus 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from b3_sampling import WORK_FUNCTIONS, yield_of

ROOT = Path(__file__).resolve().parents[1]

WORKLOAD = "import json, os, signal, sys, time" + WORK_FUNCTIONS + """pairs, per_segment, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
prof = {signal.SIGPROF}
if len(sys.argv) > 4:  # the floor: SIGPROF to a C handler that does nothing, timed as the sampler's
    import ctypes, struct, threading
    libc = ctypes.CDLL(None, use_errno=True)
    act = ctypes.create_string_buffer(152)  # glibc's struct sigaction on x86_64 / aarch64
    struct.pack_into("P", act, 0, ctypes.cast(libc.abs, ctypes.c_void_p).value)
    struct.pack_into("i", act, 136, 0x10000004)  # SA_RESTART | SA_SIGINFO
    if libc.sigaction(signal.SIGPROF, act, None) != 0:
        raise OSError(ctypes.get_errno(), "sigaction")
    sev = ctypes.create_string_buffer(64)  # struct sigevent: this thread, SIGEV_THREAD_ID
    struct.pack_into("iii", sev, 8, signal.SIGPROF, 4, threading.get_native_id())
    timer = ctypes.c_void_p()
    if libc.timer_create(1, sev, ctypes.byref(timer)) != 0:  # CLOCK_MONOTONIC
        raise OSError(ctypes.get_errno(), "timer_create")
    period = 1000000000 // int(sys.argv[4])
    its = ctypes.create_string_buffer(struct.pack("qqqq", 0, period, 0, period))
    if libc.timer_settime(timer, 0, its, None) != 0:
        raise OSError(ctypes.get_errno(), "timer_settime")
pause = os.environ.get("B3_ALTERNATE") == "pause"
if pause:  # --sampling-method thread: no signal to block; its reader walks nothing while paused
    import roctx
def segment(sampled):
    if pause:
        (roctx.resume if sampled else roctx.pause)()
    else:
        signal.pthread_sigmask(signal.SIG_UNBLOCK if sampled else signal.SIG_BLOCK, prof)
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    for _ in range(per_segment):
        fib(20)
        loop(20000)
    return time.thread_time_ns() - c0, time.perf_counter_ns() - w0
segment(True)  # warm-up
rows = []
for i in range(pairs):
    # Which half goes first alternates, so a drift within a pair favours neither.
    first = i % 2 == 0
    a = segment(first)
    b = segment(not first)
    on, off = (a, b) if first else (b, a)
    rows.append([on[0], on[1], off[0], off[1]])
signal.pthread_sigmask(signal.SIG_UNBLOCK, prof)
with open(out, "w") as f:
    json.dump(rows, f)
"""


def quartiles(xs: list[float]) -> str:
    q1, q2, q3 = statistics.quantiles(xs, n=4)
    return f"{q2:.4f} [{q1:.4f} .. {q3:.4f}]"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=200, help="segment pairs per run")
    ap.add_argument("--per-segment", type=int, default=4, help="workload iterations per segment (~3 ms each)")
    ap.add_argument("--rates", default="1000,10000")
    ap.add_argument("--cpus", default=None, help="CPU list for every run (taskset syntax, e.g. 4)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="b3alt_"))
    script = tmp / "work.py"
    script.write_text(WORKLOAD)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}{os.pathsep}{ROOT}")
    py = sys.executable
    rest = [str(args.pairs), str(args.per_segment)]
    configs = {"python (control: no sampler)": [py, str(script), *rest]}
    for hz in args.rates.split(","):
        configs[f"floor: empty C handler, {hz} Hz"] = [py, str(script), *rest, "{out}", hz]
        for mode in ("cpu", "wall"):
            configs[f"rocprof --sample {hz} ({mode})"] = [
                py, "-m", "rocprof", "run", "--sample", hz, "--sampling-mode", mode,
                "-d", str(tmp / f"s{hz}{mode}"), str(script), *rest]
        # The thread method: no signals; its halves alternate by roctx pause/resume.
        configs[f"rocprof --sample {hz} thread (cpu)"] = [
            py, "-m", "rocprof", "run", "--sample", hz, "--sampling-method", "thread",
            "-d", str(tmp / f"t{hz}"), str(script), *rest]
    pin = ["taskset", "-c", args.cpus] if args.cpus else []
    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}; {args.pairs} pairs of "
          f"{args.per_segment} iterations; cpus {args.cpus or 'any'}; load average {os.getloadavg()[0]:.1f}")
    print("sampled / blocked, per pair: median [quartiles]; and of the sums")
    for name, cmd in configs.items():
        out = tmp / "rows.json"
        argv = [str(out) if a == "{out}" else a for a in cmd]
        if "{out}" not in cmd:
            argv.append(str(out))
        run_env = dict(env, B3_ALTERNATE="pause") if "thread" in cmd else env
        subprocess.run([*pin, *argv], env=run_env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = json.loads(out.read_text())
        cpu = [on_c / off_c for on_c, _, off_c, _ in rows]
        wall = [on_w / off_w for _, on_w, _, off_w in rows]
        sums = [sum(r[i] for r in rows) for i in range(4)]
        segment_ms = 1e-6 * sums[3] / len(rows)
        taken = ""
        if "thread" in cmd:  # taken of those intended (paused halves intend none; blocked
            # halves of the signal rows count their ticks as missed, so those are not shown)
            t, m, _ = yield_of(Path(cmd[cmd.index("-d") + 1]))
            taken = f"   samples {t} taken, {m} missed ({100.0 * t / max(1, t + m):.1f} %)"
        print(f"  {name:30} thread CPU {quartiles(cpu)} sums {sums[0] / sums[2]:.4f}   "
              f"wall {quartiles(wall)} sums {sums[1] / sums[3]:.4f}   ({segment_ms:.1f} ms a segment)"
              f"{taken}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
