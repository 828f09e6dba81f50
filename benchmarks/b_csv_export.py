"""`rocpd convert DB -f csv`: wall time and peak memory over databases of 1M, 3M (and 10M) kernel
dispatches, beside a plain SQLite pass over the same rows.

Databases are B6's (benchmarks/b6_analysis_speed.py: rocprof's own writer, 200 kernel names),
built once in --dir. Each convert runs in its own process under a wrapper that reports its peak
RSS (getrusage of the waited child); the plain pass is `SELECT start, "end", name FROM kernels
ORDER BY start` read row by row in Python. ``--tree DIR`` runs the convert from another checkout
(e.g. `git archive <commit> rocpd rocshared | tar -x -C DIR`), for a before/after on one machine;
``--keep`` leaves the CSV files, to compare them byte for byte (cmp). One run per size: the box
is shared, so the load average is printed beside the figures. Usage:
    PYTHONPATH=.:python python3 benchmarks/b_csv_export.py [--dir /tmp/b6] [--sizes 1,3] [--record]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _common import ROOT, append_row  # noqa: E402
from b6_analysis_speed import build  # noqa: E402

# The child's peak RSS and CPU seconds, as /usr/bin/time -v reports them, without that tool.
WRAPPER = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode;"
           " u = resource.getrusage(resource.RUSAGE_CHILDREN);"
           " print(u.ru_maxrss, u.ru_utime + u.ru_stime, file=sys.stderr); sys.exit(rc)")


def convert(db: str, out: str, tree: str | None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak GB of `rocpd convert db -f csv -o out/x`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (tree, str(ROOT), str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p))
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, "-m", "rocpd", "convert",
                          db, "-f", "csv", "-o", os.path.join(out, "x")],
                         env=env, capture_output=True, text=True, check=True, cwd=out)
    rss, cpu = run.stderr.split()[-2:]
    return time.perf_counter() - t0, float(cpu), int(rss) / 1e6


def plain_pass(db: str) -> tuple[float, float]:
    """Wall and CPU seconds of reading the rows' start, end and name in Python."""
    import rocpd

    with rocpd.connect(db) as conn:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in conn.sources()[0].conn.execute('SELECT start, "end", name FROM kernels ORDER BY start'):
            pass
        return time.perf_counter() - t0, time.process_time() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/b6")
    ap.add_argument("--sizes", default="1,3", help="millions of kernel records, comma-separated")
    ap.add_argument("--tree", type=os.path.abspath, help="run the convert from this checkout's rocpd")
    ap.add_argument("--keep", action="store_true", help="keep the CSV files in --dir")
    ap.add_argument("--record", action="store_true", help="append a row to benchmarks/RESULTS.md")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    figures = []
    for m in (int(s) for s in args.sizes.split(",")):
        db = build(os.path.abspath(os.path.join(args.dir, f"k{m}m.db")), m * 1_000_000, m)  # b6's seeds
        # Run from the output folder: `python -m` puts the working folder before PYTHONPATH.
        out = os.path.abspath(os.path.join(args.dir, f"csv_{m}m" + ("_tree" if args.tree else "")))
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        load0 = os.getloadavg()[0]
        wall, cpu, gb = convert(db, out, args.tree)
        plain, plain_cpu = plain_pass(db)
        load1 = os.getloadavg()[0]
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
        line = (f"{m}M kernels: convert -f csv {wall:.1f} s (CPU {cpu:.1f} s), peak RSS {gb:.2f} GB;"
                f" plain SQLite pass {plain:.1f} s (CPU {plain_cpu:.1f} s); load {load0:.1f}/{load1:.1f}")
        print(line, flush=True)
        figures.append(line)
    append_row("CSV export in bounded memory", "; ".join(figures))


if __name__ == "__main__":
    main()
