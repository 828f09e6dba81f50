"""B2 (GPU tracing slowdown of a PyTorch training step) and B5 (bytes on disk per GPU
activity record), run on the GPU machine.

Workload: tests/gpu/workloads/torch_steps.py (B2_MODEL=cnn: small CNN, CIFAR-shaped batch 128;
B2_MODEL=transformer: small launch-bound bf16 transformer encoder), 30 warm-up
steps then STEPS timed steps, each variant in its own process, variants alternated (round
robin), REPEATS rounds. Prints median ms/step with min-max and the slowdown over plain, plus
records per step for the rocprof variants.

Variants (B2_VARIANTS=comma list picks some; default: all). The CUPTI ones set the cupti.*
keys through ROCPROF_CUPTI_OPTIONS so each adds one thing to the one before it:
  plain       python workload
  nogpu       rocprof run, GPU tracing off (ROCTx ranges only): the launcher's own cost
  k           CONCURRENT_KERNEL only, no ENTER callbacks
  kc          + MEMCPY/MEMSET
  kcr         + RUNTIME API activity
  kcrd        + DRIVER API activity
  kcrds       + SYNCHRONIZATION
  kcrds_cb    + ENTER callbacks on launches, copies, syncs, allocations (range/thread), no call sites
  old_default kernels, copies, runtime+driver+sync, all callbacks, call-site hook (the default
              before 2026-11-21's change)
  old_ts0     old_default without our CLOCK_BOOTTIME timestamp callback
  old_proc0   old_default with buffers returned unread (no records: CUPTI's own cost)
  kc_cb       kernels + copies + ENTER callbacks on launches/copies/sets only, no call sites
  default     `rocprof run` with no tracing flag (kc_cb + Python launch sites)
  nosites     `rocprof run` with launch sites off (ROCPROF_CUPTI_OPTIONS=launch_sites=0): default minus sites
  systrace    `rocprof run --sys-trace`
  torchprof   torch.profiler (CPU+CUDA) around the same steps
B5 comes from benchmarks/gpu_b5_bytes.py over the databases kept in B2_OUT (default a temp dir).
"""

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT)]
WORKLOAD = ROOT / "tests/gpu/workloads/torch_steps.py"
STEPS = int(os.environ.get("B2_STEPS", "200"))
MODEL = os.environ.get("B2_MODEL", "cnn")
REPEATS = int(os.environ.get("B2_REPEATS", "3"))

_ALL_OFF = "kernels=0,copies=0,sets=0,allocations=0,runtime_api=0,driver_api=0,sync=0,callbacks=none,launch_sites=0"
CUPTI = {
    "k": "kernels=1",
    "kc": "kernels=1,copies=1,sets=1",
    "kcr": "kernels=1,copies=1,sets=1,runtime_api=1",
    "kcrd": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1",
    "kcrds": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1,sync=1",
    "kcrds_cb": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1,sync=1,callbacks=all",
    "old_default": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1,sync=1,callbacks=all,launch_sites=1",
    "old_ts0": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1,sync=1,callbacks=all,launch_sites=1,timestamp=0",
    "old_proc0": "kernels=1,copies=1,sets=1,runtime_api=1,driver_api=1,sync=1,callbacks=all,launch_sites=1,process=0",
    "kc_cb": "kernels=1,copies=1,sets=1,callbacks=launch",
}
MODES = ["plain", "nogpu", *CUPTI, "nosites", "default", "systrace", "torchprof"]


def run(mode, out):
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}:{ROOT}")
    env.pop("ROCPROF_CUPTI_OPTIONS", None)
    args = [str(WORKLOAD), "--steps", str(STEPS), "--warmup", "30", "--model", MODEL]
    rp = [sys.executable, "-m", "rocprof", "run", "-d", str(out), "-o", mode]
    if mode == "plain":
        cmd = [sys.executable, *args]
    elif mode == "torchprof":
        cmd = [sys.executable, *args, "--mode", "torchprof", "--trace", str(out / "trace.json")]
    elif mode == "nogpu":
        env["ROCPROF_CUPTI_OPTIONS"] = "enabled=0"
        cmd = [*rp, *args]
    elif mode == "default":
        cmd = [*rp, *args]
    elif mode == "nosites":
        env["ROCPROF_CUPTI_OPTIONS"] = "launch_sites=0"
        cmd = [*rp, *args]
    elif mode == "systrace":
        cmd = [*rp, "--sys-trace", *args]
    else:
        env["ROCPROF_CUPTI_OPTIONS"] = _ALL_OFF + "," + CUPTI[mode]
        cmd = [*rp, "--sys-trace", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [s for s in p.stdout.splitlines() if s.startswith("{")]
    if p.returncode != 0 or not lines:
        print(f"{mode} failed (rc {p.returncode}):\n{p.stderr[-1500:]}", flush=True)
        return None
    return json.loads(lines[-1])


def counts(db):
    """(GPU activity records, all records) of a database: kernels+copies+allocations, and
    those plus regions (API calls, synchronisations, ROCTx ranges)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        c = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
             for t in ("rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_memory_allocate", "rocpd_region")}
    finally:
        con.close()
    gpu = c["rocpd_kernel_dispatch"] + c["rocpd_memory_copy"] + c["rocpd_memory_allocate"]
    return gpu, gpu + c["rocpd_region"]


def table(modes, times, out):
    base = statistics.median(times["plain"]) if times.get("plain") else None
    steps_total = STEPS + 30
    n = max(len(v) for v in times.values())
    print(f"B2: {STEPS} steps, {n} round(s), median ms/step (min-max); records per step "
          f"(GPU / all) from the last run's database ({steps_total} steps incl. warm-up)", flush=True)
    for m in modes:
        if not times[m]:
            continue
        med = statistics.median(times[m])
        rel = f"{100 * (med / base - 1):+6.1f}% {med - base:+.3f} ms" if base else ""
        recs = ""
        db = out / f"{m}_results.db"
        if db.exists():
            gpu, total = counts(db)
            recs = f"  rec/step {gpu / steps_total:6.1f} / {total / steps_total:6.1f}"
        print(f"  {m:12s} {med:7.3f} ({min(times[m]):.3f}-{max(times[m]):.3f})  {rel}{recs}", flush=True)
    # Cost per kernel above CUPTI's own floor (kernel activity alone, variant k), from the
    # kernels per step of the default run's database.
    db = out / "default_results.db"
    if times.get("k") and db.exists():
        floor = statistics.median(times["k"])
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        from rocpd import _schema  # a launch site is stored once: call_stack {"site": id}

        k, lines = con.execute(
            f"SELECT count(*), total(COALESCE({_schema.line_info_sql('E')}, '{{}}') != '{{}}') "
            "FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id").fetchone()
        con.close()
        per_step = k / steps_total
        print(f"  kernels/step {per_step:.1f}; with a Python line {100 * lines / max(k, 1):.1f}%",
              flush=True)
        for m in modes:
            if times.get(m) and m not in ("plain", "k"):
                extra = (statistics.median(times[m]) - floor) * 1000 / per_step
                print(f"  {m:12s} {extra:+7.2f} us/kernel above the floor (k)", flush=True)


def api_histogram(db, steps):
    """Which API records a --sys-trace run writes per step (category, name)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT category, name, count(*) FROM regions GROUP BY 1, 2 ORDER BY 3 DESC").fetchall()
    finally:
        con.close()
    by_cat = {}
    for cat, _, c in rows:
        by_cat[cat] = by_cat.get(cat, 0) + c
    print("  per step by category: " + ", ".join(f"{k} {v / steps:.1f}" for k, v in by_cat.items()))
    print("  top names per step: " + ", ".join(f"{n} {c / steps:.1f}" for _, n, c in rows[:12]))


def main():
    pick = os.environ.get("B2_VARIANTS")
    modes = [m for m in MODES if not pick or m in pick.split(",")]
    times = {m: [] for m in modes}
    out = Path(os.environ.get("B2_OUT") or tempfile.mkdtemp(prefix="b2_"))
    out.mkdir(parents=True, exist_ok=True)
    for _ in range(REPEATS):
        for m in modes:
            r = run(m, out)
            if r is not None:
                times[m].append(r["ms_per_step"])
        (out / "b2_times.json").write_text(json.dumps(times))
        table(modes, times, out)  # after every round: a run cut short still reports
    db = out / "systrace_results.db"
    if db.exists():
        api_histogram(db, STEPS + 30)


if __name__ == "__main__":
    main()
