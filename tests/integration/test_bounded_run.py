"""Long runs in bounded space (rocprof run --max-size, --keep; docs/long-runs.md), real runs of
the launcher on a ROCTx-only loop: the database stays under the size however many steps, every
step has its summary row, the planted slow steps keep their records and are named the slowest;
a SIGKILL leaves a valid database with the summaries so far; bad sizes are one-line errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time

import pandas as pd
import pytest
import support
from rocm_views import compare, mismatches
from support import WORKLOADS, open_db, popen_rocprof, run_rocpd, run_rocprof

STEPS = 1_000_000  # ~20-40 s on a loaded 2-core box
SLOW = (500, 400_000, 900_000)


def _size(db) -> int:
    return sum(os.path.getsize(p) for p in (f"{db}", f"{db}-wal") if os.path.exists(p))


def _summary(db):
    con = open_db(db)
    try:
        rows = con.execute("SELECT step, \"end\" - start, detail, coalesce(causes, ''), records, "
                           "start FROM rocprof_step_summary ORDER BY step").fetchall()
        meta = json.loads(con.execute("SELECT value FROM rocpd_metadata WHERE tag = "
                                      "'rocprof.bounded'").fetchone()[0])
        return con, rows, meta
    except BaseException:
        con.close()
        raise


def _wait_for_committed_steps(db, n, proc, timeout=120.0) -> int:
    """The summary rows of the first commit seen holding at least n, read as a reader would."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(db):
            try:
                con = open_db(db)
                try:
                    (rows,) = con.execute("SELECT count(*) FROM rocprof_step_summary").fetchone()
                finally:
                    con.close()
            except sqlite3.OperationalError:  # the schema not yet committed
                rows = 0
            if rows >= n:
                return rows
        time.sleep(0.05)
    raise AssertionError(f"no commit of {n} steps in {timeout:.0f} s (exit {proc.poll()}); "
                         f"{proc.stderr.read() if proc.poll() is not None else ''}")


def test_a_million_steps_stay_under_max_size_with_every_summary_and_the_slow_steps_whole(tmp_path):
    db = tmp_path / "long_results.db"
    peak = [0]
    done = threading.Event()

    def watch():  # the size on disk while it runs: the database and its WAL
        while not done.is_set():
            peak[0] = max(peak[0], _size(db))
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    try:
        r = run_rocprof("run", "-d", tmp_path, "-o", "long", "--max-size", "64MB",
                        WORKLOADS / "roctx_steps.py", STEPS, "--slow", ",".join(map(str, SLOW)),
                        timeout=600)
    finally:
        done.set()
        t.join()
    assert r.returncode == 0, r.stderr
    assert peak[0] <= 64_000_000 and os.path.getsize(db) <= 64_000_000, (peak[0], r.stderr)
    con, rows, meta = _summary(db)
    with con:
        assert [s for s, *_ in rows] == list(range(STEPS))  # every step summarised
        assert meta["steps"] == STEPS and meta["summaries_dropped"] == 0, meta
        by = {s: (d, kept, causes, n, start) for s, d, kept, causes, n, start in rows}
        slowest = sorted((s for s in by if s >= 3), key=lambda s: -by[s][0])[:3]
        assert sorted(slowest) == list(SLOW), [(s, by[s]) for s in slowest]
        for s in SLOW:
            d, kept, causes, n, start = by[s]
            assert kept == 1 and "slowest" in causes, (s, by[s])
            (stored,) = con.execute("SELECT count(*) FROM rocpd_region WHERE start >= ? AND "
                                    "start < ?", (start, by[s + 1][4])).fetchone()
            assert stored == n == 2, (s, stored, n)  # the step's range and its "work"
        (regions,) = con.execute("SELECT count(*) FROM rocpd_region").fetchone()
        assert regions < 2 * STEPS // 100  # the rest only summarised
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # one line at exit counts what was not stored
    assert "1000000 steps summarised" in r.stderr and "records of summarised steps" in r.stderr


def test_sigkill_mid_run_leaves_a_valid_database_with_the_summaries_so_far(tmp_path):
    p = popen_rocprof("run", "-d", tmp_path, "-o", "killed", "--max-size", "20MB",
                      WORKLOADS / "roctx_steps.py", 10_000_000, "--name", "step {i}",
                      start_new_session=True)
    try:
        assert p.stdout.readline().startswith("ready"), p.stderr.read()
        # Killed once a commit has stored over 2,000 steps' summaries (a fixed sleep was too
        # short on a loaded box): what the kill must not lose is what was committed.
        committed = _wait_for_committed_steps(tmp_path / "killed_results.db", 2000, p)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    con, rows, meta = _summary(tmp_path / "killed_results.db")
    with con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(rows) >= committed and [s for s, *_ in rows] == list(range(len(rows)))
        # the counts of a recent commit (steps whose summary did not fit are counted apart)
        assert meta["steps"] - meta["summaries_dropped"] <= len(rows) + 4096, meta
        assert {s for s, _, kept, *_ in rows if kept} >= {0, 1, 2}  # warm-up kept whole


@pytest.mark.parametrize("args, says", [
    (("--max-size", "5XB"), "--max-size '5XB': expected a size like 5MB, 20GB or 512MiB"),
    (("--max-size", "-1"), "--max-size '-1': expected a size"),
    (("--max-size", "1kB"), "--max-size '1kB': at least 256kB"),
    (("--max-size", "5MB", "--keep", "slow:3"), "--keep 'slow:3': expected auto, slowest:N"),
    (("--max-size", "5MB", "--keep", "every:0"), "--keep 'every:0'"),
    (("--keep", "slowest:3"), "--keep slowest:3 needs --max-size"),
])
def test_bad_values_are_one_line_errors(tmp_path, args, says):
    r = run_rocprof("run", "-d", tmp_path, *args, WORKLOADS / "roctx_steps.py", 3)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [f"rocprof run: {says}"] or (
        len(r.stderr.strip().splitlines()) == 1 and says in r.stderr), r.stderr
    assert not list(tmp_path.glob("*.db"))


@pytest.mark.parametrize("keep, detail", [("slowest:2", {1500, 2500}),
                                          ("every:1000", {0, 1000, 2000})])
def test_keep_policies(tmp_path, keep, detail):
    r = run_rocprof("run", "-d", tmp_path, "-o", "k", "--max-size", "5MB", "--keep", keep,
                    WORKLOADS / "roctx_steps.py", 3000, "--slow", "1500,2500")
    assert r.returncode == 0, r.stderr
    con, rows, meta = _summary(tmp_path / "k_results.db")
    with con:
        assert len(rows) == 3000 and meta["keep"] == keep
        assert {s for s, _, kept, *_ in rows if kept} == detail


def test_without_steps_one_line_says_so_and_a_plain_cap_holds(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "n", "--max-size", "1MB",
                    WORKLOADS / "roctx_steps.py", 30_000, "--outer", "main")
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if "no step ranges were found" in ln]
    assert len(said) == 1, r.stderr
    db = tmp_path / "n_results.db"
    assert os.path.getsize(db) <= 1_000_000
    con, rows, meta = _summary(db)
    with con:
        assert rows == [] and meta["outside_evicted"] > 0, meta
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_analysis_gives_every_step_and_rocm_views_read_the_kept_records(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "a", "--max-size", "2MB",
                    WORKLOADS / "roctx_steps.py", 5000, "--slow", "1234", "--name", "step {i}")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "a_results.db"
    a = run_rocpd("analyze", db, "--section", "steps", "--format", "csv", "-o", tmp_path / "x")
    assert a.returncode == 0, a.stderr
    steps = pd.read_csv(tmp_path / "x_steps.csv")
    assert list(steps["step"]) == list(range(5000))  # every step, with its time
    assert steps.loc[steps["Detail"], "step"].isin([0, 1, 2, 1234]).sum() == 4
    assert "slowest" in steps.loc[1234, "Causes"]
    for cmd in (("analyze", db, "--section", "per-step"), ("summary", db)):
        out = run_rocpd(*cmd)
        assert out.returncode == 0, out.stderr
        said = [ln for ln in out.stdout.splitlines() if ln.startswith("bounded run")]
        assert len(said) == 1 and "5000 steps" in said[0] and "kept whole" in said[0], out.stdout
        assert "step 1234: " in out.stdout
    rk = run_rocpd("ranks", db)
    assert rk.returncode == 0 and "a bounded run (5000 steps" in rk.stdout + rk.stderr, rk.stderr
    import rocpd.ranks  # every step from its summary, kept whole or not

    rs = rocpd.ranks.analyze(rocpd.connect(str(db))).steps
    assert list(rs["step"]) == list(range(5000))
    assert rs.loc[1234, "duration_ns"] >= 200e6 > rs["duration_ns"].median()
    d = run_rocpd("diff", db, db)
    assert d.returncode == 0 and "a bounded run: 5000 steps" in d.stdout + d.stderr, d.stderr
    assert "every step (the bounded runs' summaries, 5000 + 5000 steps)" in d.stdout, d.stdout
    assert mismatches(db) == {}  # ROCm's view SQL over the kept rows
    (n,) = open_db(db).execute("SELECT count(*) FROM rocpd_region").fetchone()
    assert compare(db)["regions"][0][0] == n


def test_gpu_records_arrive_late_and_still_go_with_their_step(tmp_path):
    """GPU records through the AMD backend on the TEST-ONLY stand-in runtimes (no GPU here): they
    reach the writer from the stand-in's completion thread, after their step's range."""
    import shutil
    import subprocess

    (tmp_path / "standin").mkdir()
    sa = support.build_amd_standin(tmp_path / "standin")
    from rocprof import library_dir

    app = tmp_path / "standin" / "hip_steps_app"
    lib = library_dir()
    subprocess.run([shutil.which("g++") or "c++", "-std=c++17", "-O1", f"-I{support._hip_headers()}",
                    "-D__HIP_PLATFORM_AMD__", f"-I{lib}/include", "-o", str(app),
                    str(support.AMD_STANDIN / "hip_steps_app.cpp"), f"-L{sa['hip'].parent}",
                    "-lrocprof_standin_hip", "-lrocprof_standin_hsa", f"-L{lib}", "-lroctx64",
                    f"-Wl,-rpath,{sa['hip'].parent}:{lib}"], check=True)
    r = run_rocprof("run", "-d", tmp_path / "out", "-o", "g", "--max-size", "1MB",
                    "--kernel-trace", "--memory-copy-trace", "--", app, 300, 100, 200,
                    env=sa["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    con, rows, meta = _summary(tmp_path / "out" / "g_results.db")
    with con:
        assert [s for s, *_ in rows] == list(range(300)) and meta["records_late"] == 0, meta
        (kernels,) = con.execute("SELECT kernels FROM rocprof_step_summary WHERE step = 7").fetchone()
        assert kernels == 2
        by = {s: (d, kept, causes, n, start) for s, d, kept, causes, n, start in rows}
        want = {100: "host time", 200: "extra kernels"}
        for s, cause in want.items():
            assert by[s][1] == 1 and cause in by[s][2] and "slowest" in by[s][2], (s, by[s])
            (k,) = con.execute("SELECT count(*) FROM rocpd_kernel_dispatch WHERE start >= ? AND "
                               "start < ?", (by[s][4], by[s + 1][4])).fetchone()
            assert k == (62 if s == 200 else 2), (s, k)
        (kept_kernels,) = con.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()
        assert kept_kernels < 2 * 300 // 2  # most steps only summarised
