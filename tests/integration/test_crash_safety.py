"""B8 as a test of correctness: a SIGKILLed run leaves a database that opens and holds every
record older than one second; forked children get their own databases, nothing duplicated."""

from __future__ import annotations

import os
import re
import signal
import time

from support import MESSAGE, WORKLOADS, open_db, popen_rocprof, run_rocprof


def test_sigkill_leaves_valid_database_with_everything_older_than_a_second(tmp_path):
    p = popen_rocprof("run", "-d", tmp_path, "-o", "killed", WORKLOADS / "steady_ranges.py")
    try:
        ticks = 0
        while ticks < 12:  # ~2.4 s of steady recording
            line = p.stdout.readline()
            assert line, p.stderr.read()
            ticks += line.startswith("tick")
        killed_at = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGKILL
    con = open_db(tmp_path / "killed_results.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT value FROM rocpd_metadata WHERE tag='schema_version'").fetchone()[0] == "3"
    rows = con.execute(f"SELECT {MESSAGE}, end FROM regions").fetchall()
    numbers = sorted(int(name[1:]) for name, _ in rows)
    assert numbers == list(range(len(numbers))), "no gaps: a prefix of the ranges, in order"
    last_end = max(end for _, end in rows)
    assert last_end >= killed_at - 1_000_000_000, (
        f"newest stored range ended {(killed_at - last_end) / 1e9:.2f} s before the kill")


def test_fork_child_gets_own_database_and_nothing_is_duplicated(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "f", WORKLOADS / "forking.py", "5")
    assert r.returncode == 0, r.stderr
    child_pid, child_rc = map(int, re.search(r"child (\d+) (\d+)", r.stdout).groups())
    assert child_rc == 0
    parent = [n for (n,) in open_db(tmp_path / "f_results.db").execute(f"SELECT {MESSAGE} FROM regions")]
    assert sorted(parent) == ["parent-after"] * 5 + ["parent-before"] * 5
    child_db = tmp_path / f"f_{child_pid}_results.db"
    assert child_db.exists(), list(tmp_path.iterdir())
    con = open_db(child_db)
    assert [n for (n,) in con.execute(f"SELECT {MESSAGE} FROM regions")] == ["child"] * 5
    pid, ppid = con.execute("SELECT pid, ppid FROM rocpd_info_process").fetchone()
    assert pid == child_pid and ppid != child_pid
    guids = {open_db(p).execute("SELECT value FROM rocpd_metadata WHERE tag='guid'").fetchone()[0]
             for p in (tmp_path / "f_results.db", child_db)}
    assert len(guids) == 2, "each database has its own guid"


def test_fork_while_drain_thread_is_busy_never_deadlocks(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "storm", WORKLOADS / "fork_storm.py", "40",
                    timeout=120)
    assert r.returncode == 0, r.stderr
    assert "children 40 ok 40" in r.stdout
    children = list(tmp_path.glob("storm_*_results.db"))
    assert len(children) == 40
    for db in children:
        names = [n for (n,) in open_db(db).execute(f"SELECT {MESSAGE} FROM regions")]
        assert names == ["child-work"], (db, names[:5])
    busy = open_db(tmp_path / "storm_results.db").execute(
        f"SELECT count(*) FROM regions WHERE {MESSAGE} = 'busy'").fetchone()[0]
    assert busy > 0


def test_fork_children_new_folder_no_empty_files_and_own_thread_ids(tmp_path):
    r = run_rocprof("run", "-d", str(tmp_path) + "/%pid%", "-o", "e", WORKLOADS / "fork_edges.py")
    assert r.returncode == 0, r.stderr
    idle, busy = map(int, re.search(r"idle (\d+) busy (\d+)", r.stdout).groups())
    child_tid = int(re.search(r"child tid (\d+)", r.stdout).group(1))
    assert not (tmp_path / str(idle)).exists(), "a child that recorded nothing leaves no file"
    con = open_db(tmp_path / str(busy) / "e_results.db")
    # A mark is a sample on the thread's marker track (as ROCm stores instants).
    assert con.execute(f"SELECT {MESSAGE}, tid FROM regions_and_samples").fetchall() == [("child-mark", child_tid)]
    assert con.execute("SELECT name FROM threads WHERE tid = ?", (child_tid,)).fetchone() == ("child-main",)
    assert "cannot write" not in r.stderr


def test_a_short_run_syncs_each_database_once(tmp_path):
    """A process that records for milliseconds (B7: each followed child) pays one fsync at
    exit, of its finished database (durable once closed), and none before: SQLite's first WAL
    header sync and its folder's come with synchronous=NORMAL, which starts after the first
    commit of records."""
    import shutil
    import subprocess
    import sys

    import pytest
    from support import _env

    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: the test counts the sync system calls")
    hello = tmp_path / "hello.py"
    hello.write_text("print('hello')\n")
    parent = tmp_path / "parent.py"
    parent.write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, {str(hello)!r}])\n")
    log = tmp_path / "syncs.txt"
    r = subprocess.run(["strace", "-f", "-y", "-e", "trace=fsync,fdatasync,sync_file_range",
                        "-o", log, sys.executable, "-m", "rocprof", "run", "-d", tmp_path / "out",
                        parent], env=_env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0 and "ptrace" in r.stderr:
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    databases = sorted(str(p) for p in (tmp_path / "out").glob("*_results.db"))
    assert len(databases) == 2, databases
    synced = sorted(re.findall(r"sync\w*\(\d+<([^>]*)>", log.read_text()))
    assert synced == databases, synced
