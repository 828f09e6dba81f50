"""ROCm's Python roctx names: context_decorators.RoctxRange / RoctxProfiler, nameHipDevice,
version_info, recorded by a real in-process session."""

from __future__ import annotations

import sqlite3

import pytest
import rocprof
import roctx
from roctx.context_decorators import RoctxProfiler, RoctxRange
from support import MESSAGE


@pytest.fixture
def session(tmp_path):
    s = rocprof.profile(output_dir=str(tmp_path), output_file="t")
    s.start()
    yield s
    s.stop()


def names(s):
    s.stop()
    conn = sqlite3.connect(f"file:{s.path}?mode=ro", uri=True)
    return [r[0] for r in conn.execute(f"SELECT {MESSAGE} FROM regions ORDER BY start")]


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
    # Outside a session: accepted, nothing recorded (the GPU-host test and the writer test
    # below check the stored names).
    assert roctx.nameHipDevice("trainer-gpu", 1) == 0
    assert roctx.nameHipStream("s", 0x1234) == 0 and roctx.nameHsaAgent("a", 0x99) == 0
    with pytest.raises(TypeError):
        roctx.nameHipDevice(3)
    with pytest.raises(TypeError):
        roctx.nameHipStream("s", "not a handle")
    assert roctx.version_info["version"] == rocprof.__version__
    rocm_all = ["mark", "profilerPause", "profilerResume", "getThreadId", "rangePush", "rangePop",
                "rangeStart", "rangeStop", "nameOsThread", "nameHipDevice", "context_decorators",
                "version_info"]
    assert all(hasattr(roctx, n) for n in rocm_all)
    assert set(rocm_all) <= set(roctx.__all__)


def test_names_land_on_the_agent_and_stream_rows(tmp_path):
    """roctxNameHipDevice / HsaAgent / HipStream records, through the real writer: a device by
    its ordinal (the GPU agent's logical_index), an agent or stream by the handle its row keeps
    in extdata; a name given before the row exists is applied when the database closes."""
    import json
    import sqlite3

    from rocpd.testing import DatabaseBuilder, gpu_agent

    with DatabaseBuilder(tmp_path / "n.db", gpus=2) as b:
        b._w.name_object(2, 0xABC, "copy-stream", tid=b.pid)  # before its row exists
        b._w.agent(gpu_agent(5), type="GPU", absolute_index=5, logical_index=5, type_index=5,
                   name="gpu5", extdata=json.dumps({"handle": 0x99}))
        b._w.stream(7, "stream 7", extdata=json.dumps({"handle": 0xABC}))
        b._w.name_object(1, 1, "trainer-gpu", tid=b.pid)
        b._w.name_object(3, 0x99, "agent-by-handle", tid=b.pid)
    con = sqlite3.connect(tmp_path / "n.db")
    users = dict(con.execute("SELECT logical_index, user_name FROM rocpd_info_agent WHERE type='GPU'"))
    assert users[1] == "trainer-gpu" and users[5] == "agent-by-handle" and users[0] != "trainer-gpu"
    assert con.execute("SELECT name FROM rocpd_info_stream WHERE id = 7").fetchone() == ("copy-stream",)
