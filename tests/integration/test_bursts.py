"""Issue 12 (1): bursts are absorbed. A thread's buffer grows by chunks up to the session's
memory budget instead of dropping past 16,384 records; past the budget, drops are counted
per cause, stored, and said in one line at exit even without -S."""

from __future__ import annotations

import re

from support import MESSAGE, WORKLOADS, open_db, run_rocprof


def _meta(db):
    return dict(open_db(db).execute("SELECT tag, value FROM rocpd_metadata"))


def test_tight_loop_of_100k_ranges_keeps_every_one(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "b", WORKLOADS / "burst_threads.py", "1", "100000")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "b_results.db"
    assert open_db(db).execute("SELECT count(*) FROM regions").fetchone()[0] == 100_000
    assert _meta(db)["rocprof.dropped_records"] == "0"
    assert "dropped" not in r.stderr


def test_eight_threads_in_tight_loops_drop_nothing(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "b", WORKLOADS / "burst_threads.py", "8", "30000")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "b_results.db"
    per = dict(open_db(db).execute(f"SELECT {MESSAGE}, count(*) FROM regions GROUP BY 1"))
    assert per == {f"burst{k}": 30_000 for k in range(8)}
    assert _meta(db)["rocprof.dropped_records"] == "0"


def test_past_the_budget_drops_are_counted_stored_and_said_without_summary(tmp_path):
    # 1 MiB is less than one 2 MiB chunk: each thread keeps its first chunk only.
    r = run_rocprof("run", "--buffer-budget", "1", "-d", tmp_path, "-o", "b",
                    WORKLOADS / "burst_threads.py", "1", "100000")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "b_results.db"
    stored = open_db(db).execute("SELECT count(*) FROM regions").fetchone()[0]
    meta = _meta(db)
    dropped = int(meta["rocprof.dropped_records.buffer_budget"])
    assert dropped > 0 and stored + dropped == 100_000
    assert meta["rocprof.dropped_records"] == str(dropped)
    lines = [ln for ln in r.stderr.splitlines() if "records dropped" in ln]
    assert len(lines) == 1, r.stderr
    assert re.search(rf"{dropped} records dropped \(buffer_budget {dropped}\)", lines[0])


def test_profile_takes_the_budget_argument(tmp_path):
    import subprocess
    import sys

    from support import _env

    code = (f"import rocprof, roctx\n"
            f"with rocprof.profile(output_dir={str(tmp_path)!r}, output_file='p', buffer_budget_mb=64):\n"
            f"    print(rocprof._core.buffer_stats()['budget_bytes'])\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[0]) == 64 << 20
