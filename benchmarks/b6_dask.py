"""B6 on Dask (issue 17): the kernel summary over many rank databases (default 256 x 1M kernel rows),
the local path (process pool) vs a Dask LocalCluster, then several ``dask worker`` processes as
separate "nodes" on loopback (a ``dask scheduler`` plus 1, 2, 4 ... worker processes) to show how
the time goes with workers, and the client's peak memory as databases are added.

Databases come from rocprof's own writer (benchmarks/b6_analysis_speed.build) under --dir and
are deleted afterwards (--keep keeps them). Every measurement runs in a fresh process (its peak
RSS is the client's alone: workers are other processes); the Dask results are checked equal to
the local one. Usage:
    PYTHONPATH=python:. python benchmarks/b6_dask.py [--dbs 256] [--rows 1000000] [--workers 1,2,4]
        [--memory 16,64,256] [--repeats 1] [--dir /tmp/b6/dask] [--keep] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from multiprocessing import Pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

BYTES_PER_ROW = 110  # a kernel row on disk (dispatch + its event row + index; guid generated), measured
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), p) for p in ("python", "")]
    + [os.environ.get("PYTHONPATH", "")])}


def _build(args):
    from b6_analysis_speed import build

    path, rows, r = args
    return build(path, rows, 1000 + r, pid=10_000 + r, rank=r)


def build_all(folder: str, dbs: int, rows: int) -> list[str]:
    os.makedirs(folder, exist_ok=True)
    need = dbs * rows * BYTES_PER_ROW
    have = shutil.disk_usage(folder).free
    missing = [r for r in range(dbs) if not os.path.exists(os.path.join(folder, f"rank{r:04d}.db"))]
    if need * len(missing) / dbs > have - 15e9:
        sys.exit(f"b6_dask: {dbs} x {rows} rows need ~{need / 1e9:.0f} GB, {have / 1e9:.0f} GB free"
                 " (15 GB kept for others): use fewer --dbs or --rows")
    t = time.perf_counter()
    with Pool(2) as pool:
        pool.map(_build, [(os.path.join(folder, f"rank{r:04d}.db"), rows, r) for r in missing])
    print(f"built {len(missing)} databases in {time.perf_counter() - t:.0f} s"
          f" ({sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)) / 1e9:.1f} GB)",
          flush=True)
    return [os.path.join(folder, f"rank{r:04d}.db") for r in range(dbs)]


# -- one measurement, in its own process ---------------------------------------------------------
def _cpu() -> float:
    """CPU seconds of this process and its reaped children (a local pool's workers)."""
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _worker_cpu() -> float:
    return time.process_time()


def child(mode: str, paths: list[str], out: str, workers: int, scheduler: str | None) -> None:
    import resource

    import rocpd

    t0 = time.perf_counter()
    if mode == "local":
        db = rocpd.connect(*paths)
    else:
        db = rocpd.connect(*paths, dask=scheduler or True, workers=workers)
    remote = (lambda: sum(db.client.run(_worker_cpu).values())) if mode != "local" else (lambda: 0.0)
    t1, c1, r1 = time.perf_counter(), _cpu(), remote()
    df = db.kernel_stats()
    t2, c2, r2 = time.perf_counter(), _cpu(), remote()
    db.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    df.to_pickle(out + ".pkl")
    with open(out, "w") as fh:
        json.dump({"open_s": t1 - t0, "summary_s": t2 - t1, "total_s": t2 - t0, "rss_mb": rss,
                   "cpu_s": (c2 - c1) + (r2 - r1), "calls": int(df["Calls"].sum())}, fh)


def measure(mode, paths, tmp, workers=2, scheduler=None) -> dict:
    listing = os.path.join(tmp, "paths.json")
    with open(listing, "w") as fh:
        json.dump(paths, fh)
    out = os.path.join(tmp, f"{mode}-{len(paths)}-{workers}.json")
    cmd = [sys.executable, __file__, "--child", mode, "--paths", listing, "--out", out,
           "--child-workers", str(workers)] + (["--scheduler", scheduler] if scheduler else [])
    load0 = os.getloadavg()[0]
    subprocess.run(cmd, check=True, env=ENV)
    with open(out) as fh:
        res = json.load(fh)
    res["load"] = (load0, os.getloadavg()[0])
    res["result"] = out + ".pkl"
    return res


# -- a scheduler and worker processes on loopback ---------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Loopback:
    """``dask scheduler`` and N ``dask worker`` processes (1 thread each), as separate nodes."""

    def __init__(self):
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", port, "--no-dashboard"], env=ENV, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.workers: list[subprocess.Popen] = []

    def scale(self, n: int) -> None:
        from distributed import Client

        while len(self.workers) < n:
            self.workers.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", "1",
                 "--nthreads", "1", "--no-dashboard", "--name", f"node{len(self.workers)}"],
                env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        while len(self.workers) > n:
            w = self.workers.pop()
            w.terminate()
            w.wait()
        with Client(self.address, timeout="30s") as c:
            deadline = time.time() + 60
            while len(c.scheduler_info()["workers"]) != n and time.time() < deadline:
                time.sleep(0.2)

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            p.terminate()
            p.wait()


def _mem_available() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/b6/dask")
    ap.add_argument("--dbs", type=int, default=256)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--workers", default="1,2,4", help="worker processes of the loopback runs")
    ap.add_argument("--memory", default="16,64,256", help="database counts of the memory runs")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--build-only", action="store_true", help="write the databases and stop")
    ap.add_argument("--record", action="store_true", help="append the figures to RESULTS.md")
    ap.add_argument("--child")
    ap.add_argument("--paths")
    ap.add_argument("--out")
    ap.add_argument("--child-workers", type=int, default=2)
    ap.add_argument("--scheduler")
    args = ap.parse_args()
    if args.child:
        with open(args.paths) as fh:
            child(args.child, json.load(fh), args.out, args.child_workers, args.scheduler)
        return
    import pandas as pd

    cores = len(os.sched_getaffinity(0))
    paths = build_all(args.dir, args.dbs, args.rows)
    if args.build_only:
        return
    size = sum(os.path.getsize(p) for p in paths)
    avail = _mem_available()
    cache = "warm page cache" if size < 0.6 * avail else \
        f"cold: {size / 1e9:.0f} GB of databases > {avail / 1e9:.0f} GB free memory, read from disk"
    if size < 0.6 * avail:  # all of it fits: read once, so that every run sees the same cache
        for p in paths:
            with open(p, "rb") as fh:
                while fh.read(1 << 24):
                    pass
    print(f"page cache: {cache}", flush=True)
    tmp = os.path.join(args.dir, "_runs")
    os.makedirs(tmp, exist_ok=True)
    fig = {}
    try:
        runs = {"local": [], "dask": []}
        for _ in range(args.repeats):  # alternated: both see the same page cache state
            runs["local"].append(measure("local", paths, tmp))
            runs["dask"].append(measure("dask", paths, tmp, workers=cores))
        want = pd.read_pickle(runs["local"][0]["result"])
        same = [pd.read_pickle(r["result"]).equals(want) for r in runs["dask"]]
        for mode, rs in runs.items():
            med = sorted(rs, key=lambda r: r["total_s"])[len(rs) // 2]
            fig[mode] = med
            print(f"{mode:6s} {args.dbs} x {args.rows}: total {med['total_s']:.1f} s (open"
                  f" {med['open_s']:.1f} s, summary {med['summary_s']:.1f} s, CPU"
                  f" {med['cpu_s']:.1f} s), client peak RSS"
                  f" {med['rss_mb']:.0f} MB, calls {med['calls']}, load {med['load'][0]:.1f}->"
                  f"{med['load'][1]:.1f}", flush=True)
        print(f"Dask result identical to the local one: {all(same)}", flush=True)
        lb = Loopback()
        try:
            curve = []
            for n in [int(x) for x in args.workers.split(",")]:
                lb.scale(n)
                r = measure("dask", paths, tmp, workers=n, scheduler=lb.address)
                same.append(pd.read_pickle(r["result"]).equals(want))
                curve.append((n, r))
                print(f"loopback, {n} worker process(es): summary {r['summary_s']:.1f} s (CPU"
                      f" {r['cpu_s']:.1f} s), total {r['total_s']:.1f} s, load {r['load'][0]:.1f}->{r['load'][1]:.1f}", flush=True)
            mem = []
            lb.scale(cores)
            for n in [int(x) for x in args.memory.split(",") if int(x) <= len(paths)]:
                rd = measure("dask", paths[:n], tmp, workers=cores, scheduler=lb.address)
                rl = measure("local", paths[:n], tmp)
                mem.append((n, rd["rss_mb"], rl["rss_mb"], rd["summary_s"], rl["total_s"]))
                print(f"{n} databases: Dask client peak RSS {rd['rss_mb']:.0f} MB (summary"
                      f" {rd['summary_s']:.1f} s); local process {rl['rss_mb']:.0f} MB"
                      f" ({rl['total_s']:.1f} s)", flush=True)
        finally:
            lb.close()
        print(f"all Dask results identical to the local one: {all(same)}")
        if args.record:
            from _common import append_row

            load = max(max(r["load"]) for rs in runs.values() for r in rs)
            row = (f"{args.dbs} DBs x {args.rows:,} rows, {cores} cores, {cache}, load up to {load:.1f}:"
                   f" local {fig['local']['total_s']:.1f} s (CPU {fig['local']['cpu_s']:.0f} s, RSS"
                   f" {fig['local']['rss_mb']:.0f} MB); Dask LocalCluster {fig['dask']['total_s']:.1f} s"
                   f" incl. start ({fig['dask']['summary_s']:.1f} s summary, CPU {fig['dask']['cpu_s']:.0f} s,"
                   f" client RSS {fig['dask']['rss_mb']:.0f} MB); loopback workers "
                   + ", ".join(f"{n}: {r['summary_s']:.1f} s" for n, r in curve)
                   + "; client RSS by DB count (Dask / local) "
                   + ", ".join(f"{n}: {d:.0f}/{lo:.0f} MB" for n, d, lo, _, _ in mem)
                   + f"; results identical: {all(same)}; goal 256x1M <= 60 s: "
                   + (("met" if fig["dask"]["total_s"] <= 60 else "MISSED")
                      if (args.dbs, args.rows) == (256, 1_000_000) else "not judged (scaled down)"))
            append_row("B6 on Dask (issue 17)", row)
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
