"""What the rate of `--gpu-metrics` costs the host, and what it resolves, on the GPU machine.

PM sampling runs in the GPU's monitors; the host pays for evaluating each sample (CUPTI's
metric evaluation, tens of µs). This sweeps `--gpu-metrics-frequency` (and the metric set) over
tests/gpu/workloads/pm_phases.py (1.5 s of bf16 GEMMs, then 1.5 s of device-to-device copies)
and prints, per setting: the rate achieved, the samples thinned and missing, the whole run's CPU
seconds over a run without metrics (getrusage of the child, the same workload), and how far the
GEMM phase's first and last tensor-busy sample lie from the first and last GEMM's edges.
Settings alternate with the baseline each round, so a drift of the host cancels out.

  python3 benchmarks/gpu_metrics_rates.py [--rates 1000,2000,5000,10000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "tests/gpu/workloads/pm_phases.py"
TENSOR = "pm_tensor_active [0]"


def run(tmp: Path, name: str, extra: list[str]) -> tuple[Path, float, dict]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'python'}:{ROOT}"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp), "-o", name,
                        "--kernel-trace", *extra, str(WORKLOAD), "--settle", "3"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{name}: exit {p.returncode}\n{p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    facts = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])
    return tmp / f"{name}_results.db", cpu, facts


def figures(db: Path) -> dict:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        meta = dict(con.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE "
                                "'rocprof.gpu_metrics.%'"))
        (lo, hi), = con.execute("SELECT start, \"end\" FROM regions WHERE "
                                "json_extract(extdata, '$.message') = 'gemm'")
        k = con.execute("SELECT min(start), max(\"end\") FROM kernels WHERE start >= ? AND "
                        "\"end\" <= ?", (lo, hi)).fetchone()
        pts = con.execute("SELECT timestamp, value FROM metric_samples WHERE track = ? ORDER BY "
                          "timestamp", (TENSOR,)).fetchall()
    finally:
        con.close()
    busy = [i for i, (_, v) in enumerate(pts) if v >= 50]
    on = pts[busy[0]][0] - k[0] if busy else None
    off = (pts[busy[-1] + 1][0] if busy and busy[-1] + 1 < len(pts) else pts[-1][0]) - k[1] \
        if busy else None
    g = ".gpu0"
    return {"achieved_hz": float(meta.get("rocprof.gpu_metrics.achieved_hz" + g, 0)),
            "samples": int(meta.get("rocprof.gpu_metrics.samples" + g, 0)),
            "thinned": int(meta.get("rocprof.gpu_metrics.thinned_samples" + g, 0)),
            "missing": int(meta.get("rocprof.gpu_metrics.missing_samples" + g, 0)),
            "overflows": int(meta.get("rocprof.gpu_metrics.overflows" + g, 0)),
            "edge_on_us": None if on is None else on / 1e3,
            "edge_off_us": None if off is None else off / 1e3,
            "points": len(pts)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="1000,2000,5000,10000")
    ap.add_argument("--sets", default="default", help="comma-separated --gpu-metrics-set names")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    settings = [(hz, s) for s in a.sets.split(",") for hz in map(int, a.rates.split(","))]
    tmp = Path(tempfile.mkdtemp(prefix="gpu_metrics_rates_"))
    base_cpu: list[float] = []
    out: dict = {f"{hz} Hz {s}": {"cpu_over_base_s": [], "runs": []} for hz, s in settings}
    for r in range(a.rounds):
        _, cpu, facts = run(tmp, f"base{r}", [])
        base_cpu.append(cpu)
        for hz, s in settings:
            key = f"{hz} Hz {s}"
            db, c, f = run(tmp, f"m{r}_{hz}_{s}", ["--gpu-metrics", "--gpu-metrics-frequency",
                                                   str(hz), "--gpu-metrics-set", s])
            out[key]["cpu_over_base_s"].append(c - cpu)
            out[key]["runs"].append({**figures(db), "gemm_step_ms": f.get("gemm_step_ms")})
            os.remove(db)
    print(f"baseline CPU s per run: {[round(c, 2) for c in base_cpu]}")
    print(f"{'setting':22} {'achieved':>9} {'thinned':>8} {'missing':>8} {'ovf':>4} "
          f"{'CPU s over base':>16} {'edge on/off µs':>18}")
    for key, v in out.items():
        runs = v["runs"]
        print(f"{key:22} {statistics.median(x['achieved_hz'] for x in runs):9.0f} "
              f"{sum(x['thinned'] for x in runs):8d} {sum(x['missing'] for x in runs):8d} "
              f"{sum(x['overflows'] for x in runs):4d} "
              f"{statistics.median(v['cpu_over_base_s']):16.2f} "
              f"{str([(x['edge_on_us'], x['edge_off_us']) for x in runs]):>18}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
