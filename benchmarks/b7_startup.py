"""B7: start-up cost of `rocprof run`, whole processes, alternated.

Each round runs, one after another (so load drifts hit every kind alike):
  python hello.py  |  python -m rocprof run hello.py  |  python parent.py  |  rocprof run parent.py
where parent.py starts CHILDREN `python hello.py` children with subprocess, which the profiled
run follows (each child records its own database). Per round:
  launcher added  = rocprof run hello.py - python hello.py
  per-child added = ((rocprof run parent.py - python parent.py) - launcher added) / CHILDREN
in wall time (the goal) and in CPU time of the process tree (user + system: what a loaded
machine inflates least). The medians and quartiles over the rounds are printed, with the load
average before and after. Compiled bytecode is cached in a private folder
(PYTHONPYCACHEPREFIX, warmed first) as an installed package has it, whatever
PYTHONDONTWRITEBYTECODE says here. `--baseline DIR` adds the two profiled kinds run from
another built checkout (its python/ and root on PYTHONPATH) to every round: before and after
in one run.

    PYTHONPATH=python:. python3 benchmarks/b7_startup.py [--rounds 30] [--baseline DIR] [--record]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, append_row

CHILDREN = 5
HELLO = "print('hello')\n"
PARENT = f"""import subprocess, sys
for _ in range({CHILDREN}):
    subprocess.run([sys.executable, {{hello!r}}], check=True)
"""


BASELINE = " (baseline)"


def environment(pycache: str, tree: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=f"{tree / 'python'}{os.pathsep}{tree}",
               PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed_ms(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall ms, CPU ms of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def measure(rounds: int, workdir: str, python: str = sys.executable, children: bool = True,
            baseline: Path | None = None) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """({kind: [wall ms per round]}, {kind: [CPU ms per round]}) for plain and profiled
    hello (and parent) runs, alternated; with `baseline`, the profiled kinds from that
    checkout too ("rocprof (baseline)" ...)."""
    d = Path(workdir)
    hello, parent = d / "hello.py", d / "parent.py"
    hello.write_text(HELLO)
    parent.write_text(PARENT.format(hello=str(hello)))
    env = environment(str(d / "pycache"))
    out = str(d / "out")

    def rocprof(script: Path, i: int, tag: str = "") -> list[str]:
        return [python, "-m", "rocprof", "run", "-d", out, "-o", f"{script.stem}{tag}{i}",
                str(script)]

    kinds = {"plain": lambda i: [python, str(hello)], "rocprof": lambda i: rocprof(hello, i)}
    if children:
        kinds |= {"plain parent": lambda i: [python, str(parent)],
                  "rocprof parent": lambda i: rocprof(parent, i)}
    envs = dict.fromkeys(kinds, env)
    if baseline is not None:
        base_env = environment(str(d / "pycache"), baseline)
        for kind in [k for k in kinds if k.startswith("rocprof")]:
            script = parent if "parent" in kind else hello
            kinds[kind + BASELINE] = lambda i, s=script: rocprof(s, i, "b")
            envs[kind + BASELINE] = base_env
    for kind, cmd in kinds.items():  # warm-up: bytecode compiled and cached, files in the page cache
        timed_ms(cmd(-1), envs[kind], workdir)
    wall: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    for i in range(rounds):
        for kind, cmd in kinds.items():
            w, c = timed_ms(cmd(i), envs[kind], workdir)
            wall[kind].append(w)
            cpu[kind].append(c)
    return wall, cpu


def added(times: dict[str, list[float]], tag: str = "") -> dict[str, list[float]]:
    """Per-round differences: the launcher's added ms, and each followed child's (of the
    baseline's kinds with tag=BASELINE)."""
    launcher = [q - p for p, q in zip(times["plain"], times["rocprof" + tag], strict=True)]
    out = {"launcher": launcher}
    if "plain parent" in times:
        out["child"] = [((q - p) - a) / CHILDREN for p, q, a in
                        zip(times["plain parent"], times["rocprof parent" + tag], launcher,
                            strict=True)]
    return out


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--baseline", type=Path, help="another built checkout, run in the same rounds")
    ap.add_argument("--record", action="store_true", help="append a row to RESULTS.md")
    args = ap.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="b7_") as d:
        wall, cpu = measure(args.rounds, d, baseline=args.baseline)
    load_after = os.getloadavg()
    print(f"B7, {args.rounds} alternated rounds, {os.cpu_count()} CPUs, load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; median [quartiles] in ms, "
          "wall | CPU")
    for kind in wall:
        (w1, w2, w3), (c1, c2, c3) = quartiles(wall[kind]), quartiles(cpu[kind])
        print(f"  {kind:27}: {w2:6.0f} [{w1:.0f} .. {w3:.0f}] | {c2:6.0f} [{c1:.0f} .. {c3:.0f}]")
    figures = {}
    for tag in ("", BASELINE) if args.baseline else ("",):
        cpu_added = added(cpu, tag)
        for what, values in added(wall, tag).items():
            (q1, q2, q3), (c1, c2, c3) = quartiles(values), quartiles(cpu_added[what])
            goal = 50 if what == "launcher" else 20
            figures[what + tag] = (q1, q2, q3, c2)
            print(f"  added, {what + tag:19}: {q2:+6.1f} [{q1:+.1f} .. {q3:+.1f}] (goal <= +{goal} "
                  f"ms{' per followed child' if what == 'child' else ''}) | CPU {c2:+.1f} "
                  f"[{c1:+.1f} .. {c3:+.1f}]")
    (l1, l2, l3, lc), (c1, c2, c3, cc) = figures["launcher"], figures["child"]
    append_row("B7 start-up (issue 27)",
               f"launcher +{l2:.0f} ms [{l1:.0f}..{l3:.0f}] (goal ≤ +50), per followed child "
               f"+{c2:.0f} ms [{c1:.0f}..{c3:.0f}] (goal ≤ +20); CPU +{lc:.0f} / +{cc:.0f} ms; "
               f"plain hello {statistics.median(wall['plain']):.0f} ms; {args.rounds} "
               "alternated rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
