"""B7: whole-process wall time of `python -m rocprof run hello.py` vs `python hello.py`,
alternated, median of repeats."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, append_row

REPEATS = 15


def timed(cmd, env, cwd) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, capture_output=True)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}{os.pathsep}{ROOT}")
    with tempfile.TemporaryDirectory() as d:
        hello = Path(d) / "hello.py"
        hello.write_text("print('hello')\n")
        plain, profiled = [], []
        for i in range(REPEATS):
            plain.append(timed([sys.executable, str(hello)], env, d))
            profiled.append(timed([sys.executable, "-m", "rocprof", "run", "-d", d, "-o", f"h{i}",
                                   str(hello)], env, d))
    p, q = statistics.median(plain), statistics.median(profiled)
    print(f"B7 python hello.py            : {p:.0f} ms (min {min(plain):.0f}, max {max(plain):.0f})")
    print(f"   python -m rocprof run hello: {q:.0f} ms (min {min(profiled):.0f}, max {max(profiled):.0f})")
    print(f"   added                      : {q - p:.0f} ms (goal ≤ 150 ms)")
    append_row("B7 launcher start-up (issue 2)",
               f"plain {p:.0f} ms, under rocprof {q:.0f} ms: +{q - p:.0f} ms (goal ≤150 ms); median of {REPEATS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
