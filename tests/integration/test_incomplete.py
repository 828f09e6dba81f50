"""A database says whether it is complete (metadata rocprof.status, rocprof.last_record_ns), and
every reader says so in one line for one that is not: still being written, or left by a killed
process (with its -wal named). The writer checkpoints every few seconds, so the .db copied
without its -wal still opens and holds what was checkpointed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

from support import WORKLOADS, _env, open_db, popen_rocprof, run_rocprof


def _rocpd(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocpd", *map(str, args)], env=_env(),
                          capture_output=True, text=True, timeout=120)


def _ticks(p, n):
    ticks = 0
    while ticks < n:
        line = p.stdout.readline()
        assert line, p.stderr.read()
        ticks += line.startswith("tick")


def test_live_then_killed_database_says_so_and_the_db_alone_opens(tmp_path):
    db = tmp_path / "k_results.db"
    p = popen_rocprof("run", "-d", tmp_path, "-o", "k", WORKLOADS / "steady_ranges.py")
    try:
        _ticks(p, 4)
        live = _rocpd("summary", db)
        assert live.returncode == 0, live.stderr
        assert f"rocpd: warning: {db} is still being written: records after " in live.stderr
        _ticks(p, 14)  # past the writer's periodic checkpoint
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    meta = dict(open_db(db).execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["rocprof.status"] == "in-progress" and int(meta["rocprof.last_record_ns"]) > 0
    r = _rocpd("summary", db)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "incomplete" in ln]
    assert len(lines) == 1, r.stderr
    assert "process killed at" in lines[0] and "records after that may be missing" in lines[0]
    assert "keep k_results.db-wal beside it" in lines[0], lines[0]

    alone = tmp_path / "copy"
    alone.mkdir()
    shutil.copy(db, alone / db.name)  # as a user copies "the database", without its -wal
    r = _rocpd("summary", alone / db.name)
    assert r.returncode == 0, r.stderr
    assert "process killed at" in r.stderr and "its -wal is not beside it" in r.stderr, r.stderr
    n = open_db(alone / db.name).execute("SELECT count(*) FROM regions").fetchone()[0]
    assert n > 0, "the checkpointed records are in the .db itself"


def test_notebook_connect_says_so_and_a_complete_database_says_nothing(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "c", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    done = tmp_path / "c_results.db"
    assert dict(open_db(done).execute("SELECT tag, value FROM rocpd_metadata"))["rocprof.status"] \
        == "complete"
    assert "warning" not in _rocpd("summary", done).stderr
    # A reader of a database whose writer was killed (built by the test: the same file with its
    # status set back, as a SIGKILL before close leaves it).
    broken = tmp_path / "b_results.db"
    shutil.copy(done, broken)
    con = __import__("sqlite3").connect(broken)
    (table,) = con.execute("SELECT name FROM sqlite_master WHERE name GLOB 'rocpd_metadata*' "
                           "AND type = 'table'").fetchone()
    con.execute(f"UPDATE \"{table}\" SET value = 'in-progress' WHERE tag = 'rocprof.status'")
    con.commit()
    con.close()
    code = f"import rocpd; db = rocpd.connect({str(broken)!r}); db.close(); rocpd.connect({str(broken)!r})"
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("process killed at") == 1, r.stderr  # once per process
