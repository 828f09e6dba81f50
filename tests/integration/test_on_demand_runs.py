"""`rocprof ctl` with no folder or pid reaches the user's own live --on-demand runs wherever they
write (each run registers itself for its user: rocprof/control.py), from any folder."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from support import WORKLOADS, popen_rocprof, run_rocprof
from test_attach import PTRACE, c_loop  # noqa: F401 - c_loop is a fixture
from test_on_demand import finish, wait_for_sockets


@pytest.fixture
def tmp_path():
    """A short folder: a control socket's path must fit in 107 bytes, and pytest's own folders
    (longer under xdist) leave too little of it."""
    folder = Path(tempfile.mkdtemp(prefix="rp-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def env(tmp_path):
    """A register of runs of this test's own (runs of other tests stay out of its listings)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    return {"XDG_RUNTIME_DIR": str(runtime)}


def _start(tmp_path: Path, env: dict, name: str, *command) -> tuple:
    out, stop_file = tmp_path / f"{name}-elsewhere", tmp_path / f"{name}.stop"
    cwd = tmp_path / f"{name}-cwd"
    cwd.mkdir()
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", name, *command, stop_file,
                         env=env, cwd=cwd)
    return proc, out, stop_file


def test_ctl_without_a_folder_finds_a_run_started_with_d_elsewhere(tmp_path, env):
    proc, out, stop_file = _start(tmp_path, env, "far", WORKLOADS / "on_demand_server.py")
    other = tmp_path / "another-cwd"
    other.mkdir()
    try:
        pid = wait_for_sockets(out)[0].stem
        status = run_rocprof("ctl", "status", env=env, cwd=other)
        assert status.returncode == 0, status.stderr
        assert f"run {proc.pid} under {out}:" in status.stdout
        assert f"pid {pid}: idle (0 windows" in status.stdout
        started = run_rocprof("ctl", "start", "--duration", "1s", env=env, cwd=other)
        assert started.returncode == 0, started.stderr
        assert Path(started.stdout.strip()) == out / "far_w1_results.db"
    finally:
        finish(proc, stop_file)
    # Its process ended: the run is gone from the register.
    gone = run_rocprof("ctl", "status", env=env, cwd=other)
    assert gone.returncode == 2 and "no live --on-demand run of yours" in gone.stderr
    assert not list(Path(env["XDG_RUNTIME_DIR"]).rglob("*.run"))


def test_a_command_runs_launcher_pid_names_its_run(tmp_path, env):
    proc, out, stop_file = _start(tmp_path, env, "cmd", "--", "python3",
                                  WORKLOADS / "on_demand_server.py")
    try:
        pid = wait_for_sockets(out)[0].stem
        assert int(pid) != proc.pid  # the launcher serves no socket: its child does
        status = run_rocprof("ctl", "status", proc.pid, env=env)
        assert status.returncode == 0 and f"pid {pid}: idle" in status.stdout, status.stderr
    finally:
        finish(proc, stop_file)


def test_several_runs_are_listed_and_start_asks_which(tmp_path, env):
    a = _start(tmp_path, env, "a", WORKLOADS / "on_demand_server.py")
    b = _start(tmp_path, env, "b", WORKLOADS / "on_demand_server.py")
    try:
        wait_for_sockets(a[1])
        wait_for_sockets(b[1])
        status = run_rocprof("ctl", "status", env=env)
        assert status.returncode == 0, status.stderr
        assert sorted(map(int, re.findall(r"^run (\d+) ", status.stdout, re.M))) == \
            sorted([a[0].pid, b[0].pid])
        assert len(re.findall(r"^pid \d+: idle", status.stdout, re.M)) == 2
        for action in ("start", "stop"):
            r = run_rocprof("ctl", action, env=env)
            assert r.returncode == 2 and r.stdout == ""
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1, r.stderr
            assert f"pid {a[0].pid} under {a[1]}" in lines[0]
            assert f"pid {b[0].pid} under {b[1]}" in lines[0]
            assert f"rocprof ctl {action} DIR|PID" in lines[0]
        assert not list(tmp_path.rglob("*.db")), "a window was started without a target"
    finally:
        finish(a[0], a[2])
        finish(b[0], b[2])


def test_a_killed_runs_entry_is_left_out_and_removed(tmp_path, env):
    proc, out, _stop = _start(tmp_path, env, "k", WORKLOADS / "on_demand_server.py")
    wait_for_sockets(out)
    registered = list(Path(env["XDG_RUNTIME_DIR"]).rglob("*.run"))
    assert [p.name for p in registered] == [f"{proc.pid}.run"]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    r = run_rocprof("ctl", "status", env=env, cwd=tmp_path)
    assert r.returncode == 2 and f"run {proc.pid}" not in r.stdout
    assert not registered[0].exists()


@pytest.mark.skipif(not PTRACE, reason="ptrace of a child is not permitted here (test_attach "
                    "checks the refusal)")
def test_an_attached_process_is_listed_as_a_run(c_loop, tmp_path, env):  # noqa: F811
    stop, out = tmp_path / "stop", tmp_path / "attached"
    proc = subprocess.Popen([c_loop, stop], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PATH": os.environ["PATH"]})
    try:
        assert proc.stdout.readline().strip() == "serving"
        armed = run_rocprof("attach", proc.pid, "-d", out, env=env, timeout=90)
        assert armed.returncode == 0, armed.stderr
        status = run_rocprof("ctl", "status", env=env, cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        assert f"run {proc.pid} under {out}:" in status.stdout
        assert f"pid {proc.pid}: idle (0 windows" in status.stdout
    finally:
        stop.touch()
        proc.communicate(timeout=60)
