"""Idle cost of `rocprof run --on-demand`: a CPU workload (pure Python arithmetic with a ROCTx
range per step, as a serving loop annotated for windows would be) run plain and under
--on-demand with no window started, alternated in one run, REPEATS times each.

The workload times its own loop (the figure excludes interpreter and launcher start-up, which
B7 measures); the ratio on-demand/plain is the idle overhead, goal within noise (<= 1 %).
    python benchmarks/b_on_demand.py [--record]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, append_row, summary

REPEATS = 7
WORKLOAD = """
import sys, time
try:
    import roctx
except ImportError:
    roctx = None
steps, work = int(sys.argv[1]), int(sys.argv[2])
t0 = time.perf_counter_ns()
acc = 0
for i in range(steps):
    if roctx is not None:
        roctx.push("step")
    for j in range(work):
        acc += j * j % 7
    if roctx is not None:
        roctx.pop()
print((time.perf_counter_ns() - t0) / 1e6)
"""


def run_once(cmd: list[str], env: dict) -> float:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    steps, work = 2000, 2000
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT),
                                         env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(WORKLOAD)
        plain = [sys.executable, str(script), str(steps), str(work)]
        armed = [sys.executable, "-m", "rocprof", "run", "--on-demand", "-d", str(Path(tmp) / "o"),
                 str(script), str(steps), str(work)]
        run_once(plain, env)  # warm the page cache for both
        run_once(armed, env)
        a, b = [], []
        for _ in range(REPEATS):
            a.append(run_once(plain, env))
            b.append(run_once(armed, env))
            time.sleep(0.1)
        dbs = list(Path(tmp, "o").rglob("*.db"))
    assert not dbs, f"--on-demand with no window recorded {dbs}"
    ratios = sorted(y / x for x, y in zip(a, b, strict=True))
    ratio = ratios[len(ratios) // 2]
    print(f"plain      loop ms: {summary(a)}")
    print(f"on-demand  loop ms: {summary(b)}")
    print(f"on-demand / plain (median of pairs): {ratio:.4f} "
          f"(pairs min {ratios[0]:.4f}, max {ratios[-1]:.4f})")
    append_row("On-demand idle overhead (b_on_demand.py)",
               f"{steps}x{work} Python steps with a ROCTx range: plain {summary(a)} ms, "
               f"--on-demand idle {summary(b)} ms, ratio {ratio:.4f}")


if __name__ == "__main__":
    main()
