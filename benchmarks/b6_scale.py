"""B6 at job scale: every rocpd command's wall time and peak memory over one database of N kernel
records, beside the floor (a plain SQLite GROUP BY over the same table), printed as the table of
the issue "every rocpd command in bounded memory, at the store's speed".

Databases are B6's (benchmarks/b6_analysis_speed.py: rocprof's own writer, 200 kernel names,
seed = N in millions), built once in --dir. Each command runs in its own process under a wrapper
that reports its peak RSS and CPU seconds (getrusage of the waited child, as /usr/bin/time -v
gives them); one run per size and command (the box is shared: the load average is printed).
``--tree DIR`` runs the commands from another checkout's rocpd (e.g. `git archive <commit>
rocpd rocshared | tar -x -C DIR`) for a before/after on one machine; ``--keep`` keeps the outputs
(analyze's JSON tables, the report, the CSV files) in --dir to compare them (cmp). Usage:
    PYTHONPATH=.:python python benchmarks/b6_scale.py [--dir /tmp/b6] [--sizes 1,3]
        [--commands floor,summary,analyze,report,report_np,csv,perfetto,diff,ranks,kernels,chunked] [--tree DIR]
        [--keep] [--record]
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

WRAPPER = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode;"
           " u = resource.getrusage(resource.RUSAGE_CHILDREN);"
           " print(u.ru_maxrss, u.ru_utime + u.ru_stime, file=sys.stderr); sys.exit(rc)")
FLOOR = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
         " t = [r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' AND"
         " name LIKE 'rocpd_kernel_dispatch%'\")][0];"
         " rows = c.execute(f'SELECT kernel_id, COUNT(*), SUM(\"end\" - start), MIN(\"end\" - start),"
         " MAX(\"end\" - start) FROM \"{t}\" GROUP BY kernel_id').fetchall(); assert rows")
KERNELS = "import rocpd, sys; df = rocpd.connect(sys.argv[1]).kernels(); assert len(df)"
CHUNKED = ("import rocpd, sys; n = sum(len(df) for df in rocpd.connect(sys.argv[1]).kernels("
           "chunksize=10_000)); assert n")


def commands(db: str, out: str) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "floor": [py, "-c", FLOOR, db],
        "summary": [py, "-m", "rocpd", "summary", db],
        "analyze": [py, "-m", "rocpd", "analyze", db, "--format", "json", "-o", f"{out}/analyze"],
        "report": [py, "-m", "rocpd", "report", db, "-o", f"{out}/report.html"],
        # The report alone, without the Perfetto trace written beside it.
        "report_np": [py, "-m", "rocpd", "report", db, "-o", f"{out}/report_np.html",
                      "--no-perfetto"],
        "csv": [py, "-m", "rocpd", "convert", db, "-f", "csv", "-o", f"{out}/csv"],
        "perfetto": [py, "-m", "rocpd", "convert", db, "-f", "perfetto", "-o",
                     f"{out}/trace.pftrace"],
        "diff": [py, "-m", "rocpd", "diff", db, db, "--format", "json", "-o", f"{out}/diff"],
        "ranks": [py, "-m", "rocpd", "ranks", db],
        "kernels": [py, "-c", KERNELS, db],
        "chunked": [py, "-c", CHUNKED, db],
    }


def measure(cmd: list[str], tree: str | None, cwd: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak GB of ``cmd`` in its own process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (tree, str(ROOT), str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p))
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], env=env, capture_output=True,
                         text=True, cwd=cwd)
    if run.returncode:
        raise SystemExit(f"{' '.join(cmd[:5])}: exit {run.returncode}: {run.stderr[-2000:]}")
    rss, cpu = run.stderr.split()[-2:]
    return time.perf_counter() - t0, float(cpu), int(rss) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/b6")
    ap.add_argument("--sizes", default="1", help="millions of kernel records, comma-separated")
    ap.add_argument("--commands", default="floor,summary,analyze,report,csv,diff,kernels,chunked")
    ap.add_argument("--tree", type=os.path.abspath, help="run the commands from this checkout's rocpd")
    ap.add_argument("--keep", action="store_true", help="keep the outputs in --dir")
    ap.add_argument("--record", action="store_true", help="append the rows to benchmarks/RESULTS.md")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    wanted = args.commands.split(",")
    print("| N kernels | " + " | ".join(wanted) + " |  (wall s (CPU s), peak RSS; load before/after)")
    print("|---" * (len(wanted) + 1) + "|")
    for m in (float(s) for s in args.sizes.split(",")):
        n = int(m * 1_000_000)
        tag = f"{m:g}m"
        db = build(os.path.abspath(os.path.join(args.dir, f"k{tag}.db")), n, int(m) or 1)
        side = f"_{os.path.basename(args.tree)}" if args.tree else ""
        out = os.path.abspath(os.path.join(args.dir, f"out_{tag}{side}"))
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        cells = []
        for name in wanted:
            load0 = os.getloadavg()[0]
            wall, cpu, gb = measure(commands(db, out)[name], args.tree, out)
            cells.append(f"{wall:.1f} s ({cpu:.1f}), {gb * 1000:.0f} MB"
                         f" [load {load0:.1f}/{os.getloadavg()[0]:.1f}]")
            print(f"  {tag} {name}: {cells[-1]}", file=sys.stderr, flush=True)
        row = f"| {m:g}M | " + " | ".join(cells) + " |"
        print(row, flush=True)
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
        append_row("B6 at job scale: every command's time and peak memory",
                   f"{'tree ' + args.tree if args.tree else 'this checkout'}: {row}")


if __name__ == "__main__":
    main()
