"""B14 — bounded output: peak memory and output size with a million distinct ROCTx range names
(a message with a step number in it: one name per call).

    PYTHONPATH=python:. python benchmarks/b14_bounded_output.py [--names 1000000] [--record]

Measured, each command in its own process (peak RSS of that process tree, from getrusage of a
wrapper that runs only it): ``rocprof run -S`` of the program (the recording and the printed
summary in one process), ``rocpd summary``, ``rocpd report`` with and without the Perfetto trace
beside it; the bytes printed and the HTML's size. Then the core's own share: in one process,
RSS after recording and after the session stopped (what stays is the string table, kept for the
process's life). Last, 100 names of 1 MB: the HTML report's size. One run; the machine is noted.
Goal (issue 24): ≤ 500 MB for -S, summary and report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from _common import ROOT, append_row  # noqa: E402

PROGRAM = """
import sys
import roctx
for i in range(int(sys.argv[1])):
    with roctx.range(f"range_{i:07d}"):
        pass
"""

IN_PROCESS = """
import json, sys
import rocprof, roctx

def rss():
    return {k: int(v.split()[0]) // 1024 for k, v in (line.split(":", 1)
            for line in open("/proc/self/status")) if k in ("VmRSS", "VmHWM")}

s = rocprof.profile(sys.argv[2], "inproc")
s.start()
for i in range(int(sys.argv[1])):
    with roctx.range(f"range_{i:07d}"):
        pass
recorded = rss()
s.stop()
print(json.dumps({"recorded": recorded, "stopped": rss()}))
"""

# Runs argv and prints the bytes it printed, the peak RSS (MB) of its process tree (the wrapper's
# RUSAGE_CHILDREN: only this command's) and its exit status.
PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True);"
        " sys.stderr.write(r.stderr.decode(errors='replace')); print(len(r.stdout),"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, r.returncode)")


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT), e.get("PYTHONPATH", "")])
    return e


def peak(*argv) -> tuple[int, int]:
    """(bytes printed on stdout, peak RSS in MB) of one command."""
    r = subprocess.run([sys.executable, "-c", PEAK, *map(str, argv)], env=env(), cwd=ROOT,
                       capture_output=True, text=True, timeout=3600)
    printed, mb, rc = (int(x) for x in r.stdout.split())
    if rc != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed:\n{r.stderr[-2000:]}")
    return printed, mb


def huge_names_report(tmp: str) -> int:
    sys.path.insert(0, str(ROOT / "python"))
    from rocpd.testing import DatabaseBuilder

    path = os.path.join(tmp, "huge.db")
    with DatabaseBuilder(path) as b:
        for i in range(100):
            s = 1_000_000 + i * 100_000
            b.marker(f"{i:03d}" + "x" * (1 << 20), s, s + 90_000)
    html = os.path.join(tmp, "huge.html")
    peak(sys.executable, "-m", "rocpd", "report", path, "-o", html, "--no-perfetto")
    return os.path.getsize(html)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", type=int, default=1_000_000)
    args = ap.parse_args([a for a in sys.argv[1:] if a != "--record"])
    tmp = tempfile.mkdtemp(prefix="b14-")
    prog = os.path.join(tmp, "names.py")
    with open(prog, "w") as fh:
        fh.write(PROGRAM)
    py = sys.executable
    printed_s, run_s = peak(py, "-m", "rocprof", "run", "-d", tmp, "-o", "names", "-S", prog,
                            args.names)
    db = os.path.join(tmp, "names_results.db")
    _, run_only = peak(py, "-m", "rocprof", "run", "-d", tmp, "-o", "plain", prog, args.names)
    printed_sum, summary = peak(py, "-m", "rocpd", "summary", db)
    html = os.path.join(tmp, "report.html")
    _, report_np = peak(py, "-m", "rocpd", "report", db, "-o", html, "--no-perfetto")
    html_mb = os.path.getsize(html) / 1e6
    _, report = peak(py, "-m", "rocpd", "report", db, "-o", os.path.join(tmp, "report2.html"))
    r = subprocess.run([py, "-c", IN_PROCESS, str(args.names), tmp], env=env(), cwd=ROOT,
                       capture_output=True, text=True, timeout=3600, check=True)
    core = json.loads(r.stdout.strip().splitlines()[-1])
    huge = huge_names_report(tmp) / 1e6
    lines = [
        f"{args.names} distinct range names; peak RSS of each command's process tree:",
        f"  rocprof run -S:                   {run_s} MB (the run alone: {run_only} MB);"
        f" printed {printed_s / 1e3:.1f} kB",
        f"  rocpd summary:                    {summary} MB; printed {printed_sum / 1e3:.1f} kB",
        f"  rocpd report --no-perfetto:       {report_np} MB; HTML {html_mb:.1f} MB",
        f"  rocpd report (+ Perfetto beside): {report} MB",
        f"  core in-process: {core['recorded']['VmRSS']} MB after recording,"
        f" {core['stopped']['VmRSS']} MB after stop (peak {core['stopped']['VmHWM']} MB)",
        f"  100 names of 1 MB: HTML report {huge:.1f} MB",
    ]
    print("\n".join(lines))
    append_row("B14 bounded output, 1M distinct names (issue 24)",
               f"-S {run_s} MB (run alone {run_only}), summary {summary} MB, report {report_np} MB"
               f" ({report} MB with Perfetto), HTML {html_mb:.1f} MB; printed -S {printed_s / 1e3:.1f}"
               f" kB; core after stop {core['stopped']['VmRSS']} MB; 100 x 1 MB names: HTML"
               f" {huge:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
