"""ROCm's Python roctx names: context_decorators.RoctxRange / RoctxProfiler, nameHipDevice,
version_info, recorded by a real in-process session."""

from __future__ import annotations

import sqlite3

import pytest
import rocprof
import roctx
from roctx.context_decorators import RoctxProfiler, RoctxRange


@pytest.fixture
def session(tmp_path):
    s = rocprof.profile(output_dir=str(tmp_path), output_file="t")
    s.start()
    yield s
    s.stop()


def names(s):
    s.stop()
    conn = sqlite3.connect(f"file:{s.path}?mode=ro", uri=True)
    return [r[0] for r in conn.execute("SELECT name FROM regions ORDER BY start")]


def test_roctx_range_context_manager_and_decorator(session):
    with RoctxRange("block") as depth:
        assert depth == 0
        with RoctxRange() as same:  # no message: no range, the manager itself
            assert isinstance(same, RoctxRange)

    @RoctxRange("call")
    def f(x):
        """doc"""
        return x + 1

    assert f(1) == 2 and f.__name__ == "f" and f.__doc__ == "doc"
    with pytest.raises(ValueError):
        with RoctxRange("raising"):
            raise ValueError("x")
    assert names(session) == ["block", "call", "raising"]


def test_roctx_profiler_records_only_inside(session):
    roctx.pause()
    with roctx.range("paused-before"):
        pass
    with RoctxProfiler():
        with roctx.range("inside"):
            pass

    @RoctxProfiler(tid=0)
    def g():
        with roctx.range("in-call"):
            pass

    g()
    with roctx.range("paused-after"):
        pass
    roctx.resume()
    assert names(session) == ["inside", "in-call"]


def test_exit_prints_nothing(capsys):
    with pytest.raises(KeyError):
        with RoctxRange("x"):
            raise KeyError("k")
    assert capsys.readouterr() == ("", "")


def test_name_hip_device_and_module_names():
    assert roctx.nameHipDevice("trainer-gpu", 1) == 0
    assert roctx.hip_device_names[1] == "trainer-gpu"
    assert roctx.nameHipDevice("gpu0") == 0 and roctx.hip_device_names[0] == "gpu0"
    with pytest.raises(TypeError):
        roctx.nameHipDevice(3)
    assert roctx.version_info["version"] == rocprof.__version__
    rocm_all = ["mark", "profilerPause", "profilerResume", "getThreadId", "rangePush", "rangePop",
                "rangeStart", "rangeStop", "nameOsThread", "nameHipDevice", "context_decorators",
                "version_info"]
    assert all(hasattr(roctx, n) for n in rocm_all)
    assert set(rocm_all) <= set(roctx.__all__)
