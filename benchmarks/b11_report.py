"""B11 — the report on a 100k-kernel database: analysis, HTML build, and load + first draw in
headless Chromium (the issue's goal: opens within a few seconds).

    PYTHONPATH=python:. python benchmarks/b11_report.py [--kernels 100000] [--repeats 3]

The database: a launch-bound-looking training loop written by the real writer (rocpd.testing):
``--kernels`` kernels with their launch calls (cudaLaunchKernel, correlated), 100 kernels per
ROCTx "step", a device synchronisation every 10 launches, launch sites on 8 Python lines.
Chromium: `--dump-dom` after the page's scripts ran reads the timeline's own timings (data
attributes: JSON parse + layout + first draw) and the wall time of the whole headless load. Prints
medians (min–max) and the markdown row for RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def make_db(path: str, kernels: int) -> None:
    from rocpd.testing import DatabaseBuilder

    with DatabaseBuilder(path) as b:
        t = 1_000_000_000
        per_step = 100
        for _ in range(kernels // per_step):
            b.marker("step", t, t + per_step * 12_000)
            for i in range(per_step):
                corr = b.next_correlation()
                line = 40 + (i % 8)
                site = ("/bench/train.py", line, "step")
                b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t, t + 4_000, correlation_id=corr,
                         site=site)
                b.kernel(f"kernel_{i % 50}", t + 6_000, t + 6_000 + 2_000 + (i % 7) * 1_000,
                         correlation_id=corr, site=site)
                t += 10_000
                if i % 10 == 9:
                    b.region("CUDA_RUNTIME_API", "cudaDeviceSynchronize", t, t + 1_500,
                             site=("/bench/train.py", 60, "step"))
                    t += 2_000
            t += 20_000


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def render(browser: str, html: str) -> tuple[float, float, int]:
    """(wall s of the headless load, ms the timeline script took, slices drawn)."""
    t = time.perf_counter()
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "--window-size=1400,1600", "--virtual-time-budget=30000",
                        "file://" + os.path.abspath(html)], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t
    ms = re.search(r'data-timeline-ms="([0-9.]+)"', r.stdout)
    drawn = re.search(r'data-timeline-drawn="([0-9]+)"', r.stdout)
    if not ms:
        raise SystemExit("the page did not run its timeline script:\n" + r.stderr[-2000:])
    return wall, float(ms.group(1)), int(drawn.group(1))


def med(xs):
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}–{max(xs):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import rocpd
    from rocpd import report
    from rocpd.analysis import analyze

    tmp = tempfile.mkdtemp(prefix="b11-")
    db_path = os.path.join(tmp, "run.db")
    t = time.perf_counter()
    make_db(db_path, args.kernels)
    print(f"database: {args.kernels} kernels in {time.perf_counter() - t:.1f} s "
          f"({os.path.getsize(db_path) / 1e6:.1f} MB)")
    t_an, t_html, walls, scripts = [], [], [], []
    browser = chromium()
    html = os.path.join(tmp, "report.html")
    for _ in range(args.repeats):
        with rocpd.connect(db_path) as db:
            t = time.perf_counter()
            a = analyze(db)
            a.findings()
            t_an.append(time.perf_counter() - t)
            t = time.perf_counter()
            report.write(db, html, perfetto=False)
            t_html.append(time.perf_counter() - t)
        if browser:
            w, ms, drawn = render(browser, html)
            walls.append(w)
            scripts.append(ms / 1000)
    size = os.path.getsize(html) / 1e6
    print(f"analysis + findings: {med(t_an)}")
    print(f"report.write (HTML, no Perfetto): {med(t_html)}; {size:.1f} MB")
    if browser:
        print(f"headless Chromium load (whole process): {med(walls)}")
        print(f"timeline script (decode, layout, first draw of {drawn} slices): {med(scripts)}")
    else:
        print("no chromium: rendering not measured")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
