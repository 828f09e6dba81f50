"""ROCm's own views see everything our writer stores, with the same counts and durations.

ROCm's view SQL (unmodified, the external judge that tests/oracle.py finds) runs over a database `rocprof run`
wrote (ROCTx ranges, marks, start/stop ranges, call-stack samples) and over one the real writer
wrote through the fixture path with GPU records (kernels, copies, sets, allocations; no GPU here:
the GPU-host test does the same over a real CUPTI trace).
"""

from __future__ import annotations

import json

from rocm_views import compare, connect_with_rocm_views, mismatches
from support import WORKLOADS, run_rocprof

from rocpd.testing import DatabaseBuilder, gpu_agent


def test_launcher_database_is_seen_whole_by_rocm_views(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "v", "--sample", "500", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "v_results.db"
    got = compare(db)
    assert got["regions"][0][0] == 7 and got["samples"][0][0] >= 1, got
    assert mismatches(db) == {}
    con = connect_with_rocm_views(db)
    # As rocprofv3: ROCTx regions are named by the API function; ROCm reads the message from
    # the event's extdata, the mark is a sample on the thread's marker track.
    rows = con.execute("SELECT name, extdata, corr_id, stack_id FROM temp.regions").fetchall()
    assert {n for n, *_ in rows} == {"roctxRangePushA"}
    assert all(c == s and c >= 2**32 for _, _, c, s in rows)
    assert {json.loads(e)["message"] for _, e, *_ in rows} == {"outer", "inner", "leaf"}
    marks = con.execute("SELECT name, extdata FROM temp.samples WHERE category = 'MARKER_CORE_API'")
    assert [(n, json.loads(e)["message"]) for n, e in marks] == [("MARKER_CORE_API", "checkpoint")]


def _gpu_fixture(path, kernel_rename=False):
    with DatabaseBuilder(path, kernel_rename=kernel_rename) as b:
        t = 1_000_000
        outer = b.marker("step", t, t + 900_000)
        for i in range(20):
            s = t + 1000 + i * 40_000
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", s, s + 50, correlation_id=1000 + i,
                     range_corr=outer)
            b.kernel("gemm" if i % 2 else "relu", s + 100, s + 30_000, correlation_id=1000 + i,
                     region="step")
        b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", t + 5, t + 900, 1 << 20)
        b._w.memory_copy("MEMORY_SET", t + 950, t + 990, 4096, tid=b.pid, src_agent=0,
                         dst_agent=gpu_agent(0), memset=True, correlation_id=b.next_correlation())
        b.allocation("ALLOC", t + 1, t + 2, 1 << 20)
        b.allocation("FREE", t + 990_000, t + 990_001, 1 << 20)
        b.marker("tick", t + 500, t + 500)
    return path


def test_gpu_records_are_seen_whole_by_rocm_views(tmp_path):
    db = _gpu_fixture(tmp_path / "g.db")
    got = compare(db)
    assert got["kernels"][0][0] == 20 and got["memory_copies"][0][0] == 2, got
    assert got["memory_allocations"][0][0] == 2 and got["regions"][0][0] == 21, got
    assert mismatches(db) == {}
    con = connect_with_rocm_views(db)
    # The dispatch's region is the kernel's name (ROCm INNER-JOINs it); ours keeps the range.
    assert con.execute("SELECT DISTINCT region = name FROM temp.kernels").fetchall() == [(1,)]
    assert {r for (r,) in con.execute("SELECT DISTINCT roctx_range FROM main.kernels")} == {"step"}


def test_kernel_rename_names_dispatches_by_their_range(tmp_path):
    db = _gpu_fixture(tmp_path / "r.db", kernel_rename=True)
    assert mismatches(db) == {}
    con = connect_with_rocm_views(db)
    assert {r for (r,) in con.execute("SELECT DISTINCT region FROM temp.kernels")} == {"step"}
    assert {r for (r,) in con.execute("SELECT DISTINCT name FROM temp.kernels")} == {"gemm", "relu"}
