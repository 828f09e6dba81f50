"""One fault guard for every Python frame walk (cpp/capture/python/guard.*), shared by the
sampler and GPU launch sites: a fault inside a walk of either is caught; a fault outside
any walk still reaches a handler installed before ours (here faulthandler)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from tests.support import WORKLOADS, _env

try:
    from rocprof import _core
except ImportError:
    _core = None

USERS = ["sampler", "launch_sites", "both"]


def _run(tmp_path, mode, users):
    if users != "sampler" and not hasattr(_core, "_launch_sites_start"):
        pytest.skip("built without the CUPTI backend: no launch sites")
    return subprocess.run([sys.executable, str(WORKLOADS / "frame_guard.py"), mode, users,
                           str(tmp_path / "out")], env=_env(), capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("users", USERS)
def test_fault_inside_a_walk_is_caught(users, tmp_path):
    r = _run(tmp_path, "walk", users)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["installed"], got
    assert set(got["walks"]) == {"segv/thread", "segv/signal", "bus/thread", "bus/signal"}
    assert all(v == got["fault_code"] for v in got["walks"].values()), got
    if users != "sampler":  # real walks still work after the caught faults
        frames = json.loads(got["site"])
        assert [f["function"] for f in frames[:2]] == ["site", "walk"], frames
        assert frames[0]["file"].endswith("frame_guard.py"), frames
    # installed while any user runs; given back (to SIG_DFL here) once the last one stopped
    assert got["installed_per_stop"] == [True] * (len(got["installed_per_stop"]) - 1) + [False]


@pytest.mark.parametrize("after_stop", [False, True], ids=["running", "stopped"])
@pytest.mark.parametrize("users", USERS)
def test_fault_outside_walks_reaches_the_handler_installed_before(users, after_stop, tmp_path):
    r = _run(tmp_path, "chain_after_stop" if after_stop else "chain", users)
    states = [json.loads(line)["installed"] for line in r.stdout.splitlines() if line.startswith("{")]
    assert states == ([True, False] if after_stop else [True]), (r.stdout, r.stderr[-2000:])
    assert "survived" not in r.stdout
    assert r.returncode == -signal.SIGSEGV, (r.returncode, r.stderr[-3000:])
    assert "Fatal Python error: Segmentation fault" in r.stderr, r.stderr[-3000:]
    assert "frame_guard.py" in r.stderr  # faulthandler's traceback of the faulting line
