"""`rocprof attach PID`: a running program not started by rocprof is armed (ptrace loading of
librocprof_inject.so, or sys.remote_exec on Python >= 3.14) and recorded for a window; where
ptrace is not permitted, the one-line refusal names the setting."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import MESSAGE, ROOT, WORKLOADS, build_roctx_program, open_db, run_rocprof


def ptrace_permitted() -> bool:
    """Whether this process may ptrace a child of its own (as the attacher will)."""
    libc = ctypes.CDLL(None, use_errno=True)
    child = subprocess.Popen(["sleep", "30"])
    try:
        ok = libc.ptrace(16, child.pid, None, None) == 0  # PTRACE_ATTACH
        if ok:
            os.waitpid(child.pid, 0x40000000)
            libc.ptrace(17, child.pid, None, None)  # PTRACE_DETACH
        return ok
    finally:
        child.kill()
        child.wait()


PTRACE = ptrace_permitted()


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    return build_roctx_program(WORKLOADS / "roctx_loop.c", tmp_path_factory.mktemp("c") / "roctx_loop")


def ranges(db: Path) -> list[int]:
    with open_db(db) as c:
        names = [n for (n,) in c.execute(f"SELECT {MESSAGE} FROM regions ORDER BY start")]
    return [int(re.fullmatch(r"(?:c|req)(\d+)", n).group(1)) for n in names]


def attach_and_check(proc: subprocess.Popen, out: Path, *extra: str,
                     env: dict | None = None) -> Path | None:
    assert proc.stdout.readline().strip() == "serving"
    r = run_rocprof("attach", str(proc.pid), "--duration", "2s", "-d", out, *extra, timeout=90,
                    env=env)
    if not PTRACE:
        assert r.returncode == 1
        assert re.fullmatch(r"rocprof attach: ptrace of pid \d+ refused \(E\w+\): "
                            r"kernel\.yama\.ptrace_scope is .*CAP_SYS_PTRACE.*\n", r.stderr), r.stderr
        return None
    assert r.returncode == 0, r.stderr
    db = Path(r.stdout.strip())
    assert db.is_absolute() and db.name == f"{proc.pid}_w1_results.db", r.stdout
    numbers = ranges(db)
    assert numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert proc.poll() is None, "the attached program died"
    return db


def test_native_program_attached_by_ptrace_records_its_roctx_ranges(c_loop, tmp_path):
    stop = tmp_path / "stop"
    proc = subprocess.Popen([c_loop, stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PATH": os.environ["PATH"]})
    try:
        attach_and_check(proc, tmp_path / "out")
    finally:
        stop.touch()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_attached_from_a_rocprof_under_a_path_with_spaces(c_loop, tmp_path):
    # rocprof installed under "My Projects/...": its library is found in the target's memory
    # map, whose lines end with the path, spaces included.
    site = tmp_path / "My Projects" / "site"
    for package in ("rocprof", "roctx"):
        shutil.copytree(ROOT / "python" / package, site / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    stop = tmp_path / "stop"
    proc = subprocess.Popen([c_loop, stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PATH": os.environ["PATH"]})
    try:
        attach_and_check(proc, tmp_path / "out", env={"PYTHONPATH": f"{site}{os.pathsep}{ROOT}"})
    finally:
        stop.touch()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_python_process_not_started_by_rocprof_is_attached(tmp_path):
    stop = tmp_path / "stop"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.Popen([sys.executable, WORKLOADS / "on_demand_server.py", stop],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        attach_and_check(proc, tmp_path / "out")
    finally:
        stop.touch()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


@pytest.mark.skipif(hasattr(sys, "remote_exec"), reason="this Python has sys.remote_exec")
def test_remote_exec_method_needs_python_314_and_says_so(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        r = run_rocprof("attach", str(proc.pid), "--method", "remote-exec", "-d", tmp_path)
    finally:
        proc.kill()
        proc.wait()
    assert r.returncode == 1
    assert r.stderr.startswith("rocprof attach: remote-exec needs rocprof running on Python >= "
                               "3.14 (sys.remote_exec, PEP 768)"), r.stderr


@pytest.mark.skipif(not hasattr(sys, "remote_exec"),
                    reason=f"Python {sys.version.split()[0]} here: sys.remote_exec (PEP 768) "
                           "needs 3.14")
def test_python_314_process_attached_through_remote_exec(tmp_path):
    stop = tmp_path / "stop"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.Popen([sys.executable, WORKLOADS / "on_demand_server.py", stop],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        attach_and_check(proc, tmp_path / "out", "--method", "remote-exec")
    finally:
        stop.touch()
        proc.communicate(timeout=60)


def test_missing_process_is_one_line(tmp_path):
    proc = subprocess.Popen(["true"])
    proc.wait()
    time.sleep(0.1)
    r = run_rocprof("attach", str(proc.pid), "-d", tmp_path)
    assert r.returncode == 1 and r.stderr == f"rocprof attach: process {proc.pid} does not exist\n"
