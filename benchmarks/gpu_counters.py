"""Per-kernel hardware counters on the GPU host (issue 14's done-when), one run, side by side:

  python3 benchmarks/gpu_counters.py [--n 8192] [--copy-mib 1024] [--out DIR]

1. `rocprof avail`: counters listed for GPU 0.
2. `rocprof peaks --force` into a fresh cache: empirical DRAM bandwidth and GEMM FLOP/s.
3. `rocprof run --sol examples/sol_demo.py`: `rocpd sol` on the bf16 N^3 matmul (FLOP/s counted,
   2N^3/t, % of the tensor peak) and the 1 GiB copy (% of the empirical DRAM bandwidth).
4. `ncu` on the same matmul, the same tensor-op metric over its own duration: FLOP/s to compare.
5. `rocprof run --pmc dram__bytes_read.sum` on a copy of N bytes: bytes read vs N.
6. Wall time of sol_demo alone, under default tracing and under --sol (what serialising and
   replaying costs).

Prints a block ready for benchmarks/RESULTS.md. Needs PyTorch with CUDA; ncu is optional.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT)]


def env(cache: str | None = None) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = f"{ROOT / 'python'}:{ROOT}"
    if cache:
        e["XDG_CACHE_HOME"] = cache
    return e


def run(cmd, **kw) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)
    return p, time.perf_counter() - t0


def check(p, what):
    if p.returncode != 0:
        sys.exit(f"{what} failed (exit {p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")


def ncu_flops(n: int) -> tuple[float | None, str]:
    exe = shutil.which("ncu")
    if exe is None:
        return None, "ncu not on PATH"
    metrics = "sm__ops_path_tensor_src_bf16_dst_fp32.sum,gpu__time_duration.sum"
    # As the run under rocprof: clocks and caches left alone (ncu locks base clocks and flushes
    # caches by default, which slowed this matmul by ~10 % on an H100).
    p, _ = run([exe, "--csv", "--print-units", "base", "--clock-control", "none",
                "--cache-control", "none", "--metrics", metrics, "-k",
                "regex:gemm|nvjet|xmma|cutlass|sm90", "--launch-count", "1", sys.executable,
                str(ROOT / "examples/sol_demo.py"), "--n", str(n), "--copy-mib", "64", "--repeat", "1"],
               env=env(), timeout=1800)
    if p.returncode != 0:
        return None, f"ncu failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}"
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith('"')]
    vals, kernel = {}, "?"
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        vals[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        kernel = r.get("Kernel Name", kernel)
    ops, ns = vals["sm__ops_path_tensor_src_bf16_dst_fp32.sum"], vals["gpu__time_duration.sum"]
    return ops / (ns / 1e9), f"{kernel[:60]}: {ops:.4g} ops in {ns / 1e3:.1f} us"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--copy-mib", type=int, default=1024)
    ap.add_argument("--out", default=None, help="folder for databases (default: a temp folder)")
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="rocprof-counters-"))
    out.mkdir(parents=True, exist_ok=True)
    cache = str(out / "cache")
    py = sys.executable
    lines = []

    p, _ = run([py, "-m", "rocprof", "avail"], env=env(), timeout=600)
    check(p, "rocprof avail")
    m = re.search(r"GPU 0: (.*) \(chip (\w+)\): (\d+) counters", p.stdout)
    device, chip, n_counters = m.group(1), m.group(2), int(m.group(3))

    p, t_peaks = run([py, "-m", "rocprof", "peaks", "--force", "--json"], env=env(cache), timeout=1200)
    check(p, "rocprof peaks")
    peaks = next(iter(json.loads(p.stdout).values()))

    demo = [str(ROOT / "examples/sol_demo.py"), "--n", str(a.n), "--copy-mib", str(a.copy_mib),
            "--repeat", "3"]
    p, t_plain = run([py, *demo], env=env(), timeout=1200)
    check(p, "sol_demo")
    p, t_trace = run([py, "-m", "rocprof", "run", "-d", str(out), "-o", "trace", *demo], env=env(),
                     timeout=1200)
    check(p, "rocprof run sol_demo")
    p, t_sol = run([py, "-m", "rocprof", "run", "-d", str(out), "-o", "sol", "--sol", *demo],
                   env=env(cache), timeout=3600)
    check(p, "rocprof run --sol sol_demo")

    import rocpd
    from rocpd.counters import sol

    with rocpd.connect(str(out / "sol_results.db")) as db:
        res = sol.compute(db)
        meta = {k: v for _, k, v in db.metadata()}
    k = res.kernels
    gemm = k[[sol.dominant(r) == "tensor_bf16" for _, r in k.iterrows()]].sort_values("seconds").iloc[-1]
    elementwise = k[k["kernel_name"].str.contains("elementwise", regex=False)]
    copy = elementwise.sort_values("bytes_dram").iloc[-1]  # y = x * 1.0 over the copy size
    g_rate, g_peak = gemm["rate_tensor_bf16"], gemm["peak_tensor_bf16"]
    analytic = 2 * a.n ** 3 * gemm["dispatches"] / gemm["seconds"]
    emp_dram = res.peaks[int(copy["agent_id"])].empirical.get("dram", float("nan"))
    ncu, ncu_note = ncu_flops(a.n)

    p, _ = run([py, "-m", "rocprof", "run", "-d", str(out), "-o", "pmc", "--pmc", "dram__bytes_read.sum",
                str(ROOT / "tests/gpu/workloads/counters_copy.py"), "--mib", str(a.copy_mib)],
               env=env(), timeout=1200)
    check(p, "rocprof run --pmc counters_copy")
    nbytes = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])["bytes"]
    import sqlite3

    con = sqlite3.connect(f"file:{out / 'pmc_results.db'}?mode=ro", uri=True)
    (read,) = con.execute("SELECT value FROM counters_collection WHERE roctx_range='copy' AND "
                          "counter_name='dram__bytes_read.sum'").fetchone()

    date = datetime.date.today().isoformat()
    lines.append(f"### Hardware counters, speed of light ({date}, {device}, chip {chip})")
    lines.append("")
    lines.append("| check | measured | threshold | result |")
    lines.append("|---|---|---|---|")
    lines.append(f"| `rocprof avail` | {n_counters} counters on GPU 0 | lists them | "
                 f"{'pass' if n_counters > 500 else 'FAIL'} |")
    pct = 100 * g_rate / g_peak
    lines.append(f"| bf16 {a.n}^3 matmul, `rocpd sol` | {g_rate / 1e12:.1f} TFLOP/s = {pct:.1f} % of "
                 f"{g_peak / 1e12:.1f} (tensor peak x the kernel's clock) "
                 f"| >= 70 % | {'pass' if pct >= 70 else 'FAIL'} |")
    lines.append(f"| same, counted FLOPs vs 2N^3/t | {g_rate / 1e12:.1f} vs {analytic / 1e12:.1f} TFLOP/s "
                 f"({100 * (g_rate / analytic - 1):+.1f} %) | within 10 % | "
                 f"{'pass' if abs(g_rate / analytic - 1) <= 0.10 else 'FAIL'} |")
    if ncu:
        lines.append(f"| same vs Nsight Compute | {g_rate / 1e12:.1f} vs {ncu / 1e12:.1f} TFLOP/s "
                     f"({100 * (g_rate / ncu - 1):+.1f} %; {ncu_note}) | within 10 % | "
                     f"{'pass' if abs(g_rate / ncu - 1) <= 0.10 else 'FAIL'} |")
    else:
        lines.append(f"| same vs Nsight Compute | not measured: {ncu_note} | within 10 % | - |")
    dpct = 100 * copy["rate_dram"] / emp_dram
    lines.append(f"| {a.copy_mib} MiB copy kernel ({copy['kernel_name'][:40]}) | "
                 f"{copy['rate_dram'] / 1e12:.2f} TB/s = {dpct:.1f} % of empirical "
                 f"{emp_dram / 1e12:.2f} TB/s | >= 80 % | {'pass' if dpct >= 80 else 'FAIL'} |")
    rel = read / nbytes - 1
    lines.append(f"| `--pmc dram__bytes_read.sum`, copy of {nbytes} B | {read:.0f} B ({100 * rel:+.2f} %) "
                 f"| within 2 % | {'pass' if abs(rel) <= 0.02 else 'FAIL'} |")
    lines.append("")
    lines.append(f"Empirical peaks (`rocprof peaks`, {t_peaks:.0f} s): DRAM "
                 f"{peaks['dram_bytes_per_second'] / 1e12:.2f} TB/s, L2 {peaks['l2_bytes_per_second'] / 1e12:.2f} TB/s, "
                 + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in peaks["flops"].items()) + ".")
    lines.append(f"Counter passes per kernel under --sol: {meta.get('rocprof.counters.passes', '?')}; "
                 f"launches profiled {meta.get('rocprof.counters.launches_profiled', '?')}.")
    lines.append(f"sol_demo wall time: {t_plain:.1f} s alone, {t_trace:.1f} s traced (default), "
                 f"{t_sol:.1f} s under --sol (serialised, replayed; includes the peaks check).")
    print("\n".join(lines))
    print(f"\n(databases in {out})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
