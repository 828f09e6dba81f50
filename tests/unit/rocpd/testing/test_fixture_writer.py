"""Fixtures are written by the real writer (rocprof._core._fixture_writer → RocpdSink): the rows a
test reads are the rows a session writes, with the values the test chose."""

import sqlite3

import pytest

from rocpd import connect
from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent

_core = pytest.importorskip("rocprof._core")


def test_agent_numbering_is_the_writers():
    assert CPU_AGENT == _core._CPU_AGENT_ID == 1
    assert [gpu_agent(i) for i in range(3)] == [_core._gpu_agent_id(i) for i in range(3)] == [2, 3, 4]


def test_builder_output_carries_the_writers_rows(tmp_path):
    path = tmp_path / "a.db"
    with DatabaseBuilder(path, pid=77, gpus=2) as b:
        b.kernel("gemm", 100, 200)
        b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", 210, 220, 64)
        b.sample(None, 150, call_stack=["main", "step"])
    c = sqlite3.connect(path)
    agents = c.execute("SELECT id, type, absolute_index FROM rocpd_info_agent ORDER BY id").fetchall()
    assert agents == [(1, "CPU", 0), (2, "GPU", 0), (3, "GPU", 1)]
    meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    for tag in ("rocprof.clock_domain", "rocprof.record_format_version", "rocprof.dropped_records"):
        assert tag in meta  # written by RocpdSink at open, not by the builder
    assert c.execute("SELECT agent_id, stream_id FROM rocpd_kernel_dispatch").fetchall() == [(2, 0)]
    assert c.execute("SELECT src_agent_id, dst_agent_id FROM rocpd_memory_copy").fetchall() == [(1, 2)]
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # the writer's close
    c.close()
    with connect(str(path)) as db:
        from rocpd.summary import samples

        [(_, _, _, _, stack)] = samples.sample_rows(db)
        assert [f.function for f in samples.Stacks(db).frames(b.guid, stack)] == ["main", "step"]


def test_writer_refuses_an_existing_path_and_use_after_close(tmp_path):
    path = tmp_path / "a.db"
    path.write_bytes(b"")
    with pytest.raises(RuntimeError, match="already exists"):
        _core._fixture_writer(str(path), pid=1)
    w = _core._fixture_writer(str(tmp_path / "b.db"), pid=1)
    with pytest.raises(ValueError, match="allocation type"):
        w.allocation("BOGUS", 1, 2, 3, tid=1, agent=2)
    assert w.close(10) == str(tmp_path / "b.db")
    with pytest.raises(RuntimeError, match="closed"):
        w.thread(1)
    c = sqlite3.connect(tmp_path / "b.db")
    assert c.execute('SELECT fini, "end" FROM rocpd_info_process').fetchall() == [(10, 10)]
    c.close()
