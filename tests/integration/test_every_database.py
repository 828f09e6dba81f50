"""Every database a run produced is named at its end, however the run ends (normal exit,
os._exit, SIGTERM/SIGHUP, a fork child's own database, an exec'd image: test_exec.py), and -S
summarises them all: per process, then in total."""

from __future__ import annotations

import os
import re
import signal

import pytest
from support import WORKLOADS, popen_rocprof, run_rocprof


def _written(stderr: str) -> list[str]:
    return re.findall(r"results written to (\S+)", stderr)


def test_in_process_fork_children_are_named_and_summarised(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "f", "-S", WORKLOADS / "forking.py", "5")
    assert r.returncode == 0, r.stderr
    child = int(re.search(r"child (\d+) 0", r.stdout).group(1))
    parent_db, child_db = tmp_path / "f_results.db", tmp_path / f"f_{child}_results.db"
    assert sorted(_written(r.stderr)) == sorted([str(parent_db), str(child_db)]), r.stderr
    sections = re.findall(r"^== (/\S+|all \d+ processes)$", r.stdout, re.M)
    assert sections == [str(parent_db), str(child_db), "all 2 processes"], sections
    total = r.stdout.split("== all 2 processes", 1)[1]
    calls = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\S+)\s+(\d+)\s", total, re.M)}
    assert calls.get("parent-before") == 5 and calls.get("child") == 5, total


def test_os_exit_names_the_database(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "x", WORKLOADS / "exit_with.py", "os_exit", "4")
    assert r.returncode == 4, r.stderr
    assert _written(r.stderr) == [str(tmp_path / "x_results.db")], r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signalled_in_process_run_names_the_database(tmp_path, sig):
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)  # not nohup's SIG_IGN (see above)
    try:
        p = popen_rocprof("run", "-d", tmp_path, "-o", "sig", WORKLOADS / "signal_self.py", "plain")
    finally:
        signal.signal(signal.SIGHUP, previous)
    try:
        assert p.stdout.readline().startswith("ready"), p.stderr.read()
        os.kill(p.pid, sig)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -sig, err
    assert _written(err) == [str(tmp_path / "sig_results.db")], err
