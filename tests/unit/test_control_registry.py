"""The register of --on-demand runs (rocprof/control.py): per user, in a folder trusted only when
it is this user's and closed to others, holding regular files only; runs whose process ended are
left out and their files removed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile

import pytest
from rocprof import control


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    return tmp_path / "rocprof"


def _ended_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_a_run_is_listed_while_its_process_lives(runtime, tmp_path):
    assert control.register(str(tmp_path / "out")) is None
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    entry = runtime / f"{os.getpid()}.run"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    runs = control.live_runs()
    assert [(r.pid, r.folder) for r in runs] == [(os.getpid(), str(tmp_path / "out"))]
    assert "python" in runs[0].command or "pytest" in runs[0].command
    control._unregister(str(runtime), os.getpid(), json.loads(entry.read_text())["start"])
    assert not entry.exists() and control.live_runs() == []


def test_another_process_is_registered_for_its_life(runtime, tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        assert control.register(str(tmp_path), pid=sleeper.pid) is None
        assert [r.pid for r in control.live_runs()] == [sleeper.pid]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert control.live_runs() == []
    assert not (runtime / f"{sleeper.pid}.run").exists()


def test_ended_and_reused_pids_are_left_out_and_removed(runtime, tmp_path):
    runtime.mkdir(mode=0o700)
    dead = _ended_pid()
    (runtime / f"{dead}.run").write_text(json.dumps({"pid": dead, "start": 1, "folder": "/x"}))
    # This process's pid with another start time: the pid was reused by another process.
    me = os.getpid()
    (runtime / f"{me}.run").write_text(json.dumps({"pid": me, "start": 1, "folder": "/y"}))
    assert control.live_runs() == []
    assert list(runtime.iterdir()) == []


def test_a_folder_others_may_enter_is_not_trusted(runtime, tmp_path):
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    with pytest.raises(control.RegistryError, match="only this user can enter"):
        control.live_runs()
    assert "only this user can enter" in control.register(str(tmp_path))
    assert list(runtime.iterdir()) == []


def test_a_link_in_place_of_the_folder_is_not_followed(runtime, tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    runtime.symlink_to(target)
    with pytest.raises(control.RegistryError, match="not a folder"):
        control.live_runs()
    assert control.register(str(tmp_path)) is not None
    assert list(target.iterdir()) == []


def test_a_linked_entry_is_not_read(runtime, tmp_path):
    assert control.register(str(tmp_path)) is None
    mine = runtime / f"{os.getpid()}.run"
    real = tmp_path / "elsewhere.run"
    mine.rename(real)
    mine.symlink_to(real)
    assert control.live_runs() == []


def test_without_xdg_runtime_dir_a_folder_per_uid_in_the_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert control.registry_folder() == str(tmp_path / f"rocprof-{os.geteuid()}")
    assert control.register(str(tmp_path)) is None
    assert [r.pid for r in control.live_runs()] == [os.getpid()]
    control._unregister(control.registry_folder(), os.getpid(), control._start_time(os.getpid()))
