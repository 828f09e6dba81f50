"""B2 (GPU tracing slowdown of a PyTorch training step) and B5 (bytes on disk per GPU
activity record), run on the GPU machine.

Workload: tests/gpu/workloads/torch_steps.py (small CNN, CIFAR-shaped batch 128), 30 warm-up
steps then STEPS timed steps, in separate processes, alternated, REPEATS times:
  plain       python workload
  rocprof     python -m rocprof run (default tracing: kernels, copies, runtime API, markers)
  rocprof-nocs  the same without Python launch sites (ROCPROF_GPU_CALLSITE=0)
  torchprof   torch.profiler (CPU+CUDA) around the same steps
Prints a table of median ms/step with the spread, and B5 from the last rocprof and
torch.profiler runs.
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
WORKLOAD = ROOT / "tests/gpu/workloads/torch_steps.py"
STEPS = int(os.environ.get("B2_STEPS", "200"))
REPEATS = int(os.environ.get("B2_REPEATS", "3"))


def run(mode, out):
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}:{ROOT}")
    args = [str(WORKLOAD), "--steps", str(STEPS), "--warmup", "30"]
    if mode.startswith("rocprof"):
        if mode == "rocprof-nocs":
            env["ROCPROF_GPU_CALLSITE"] = "0"
        cmd = [sys.executable, "-m", "rocprof", "run", "-d", str(out), "-o", mode, *args]
    elif mode == "torchprof":
        cmd = [sys.executable, *args, "--mode", "torchprof", "--trace", str(out / "trace.json")]
    else:
        cmd = [sys.executable, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{p.stderr[-2000:]}")
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def records(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_memory_allocate", "rocpd_region"))
    gpu = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("rocpd_kernel_dispatch", "rocpd_memory_copy"))
    con.close()
    return n, gpu


def main():
    modes = ["plain", "rocprof", "rocprof-nocs", "torchprof"]
    times = {m: [] for m in modes}
    out = Path(tempfile.mkdtemp(prefix="b2_"))
    last = {}
    for _ in range(REPEATS):
        for m in modes:
            r = run(m, out)
            times[m].append(r["ms_per_step"])
            last[m] = r
    base = statistics.median(times["plain"])
    print(f"B2: {STEPS} steps x {REPEATS} repeats, median ms/step (min-max)")
    for m in modes:
        med = statistics.median(times[m])
        print(f"  {m:13s} {med:7.3f} ({min(times[m]):.3f}-{max(times[m]):.3f})  {100 * (med / base - 1):+6.1f}%")
    db = out / "rocprof_results.db"
    n, gpu = records(db)
    size = db.stat().st_size
    tj = out / "trace.json"
    ev = last["torchprof"]["events"]
    print(f"B5: rocprof {size} B / {n} records = {size / n:.1f} B/record ({gpu} kernels+copies); "
          f"torch.profiler JSON {tj.stat().st_size} B / {ev} events = {tj.stat().st_size / ev:.1f} B/event")
    print(f"    kernels: rocprof {gpu} rows incl. copies; torch.profiler {last['torchprof']['kernels']} kernels")


if __name__ == "__main__":
    main()
