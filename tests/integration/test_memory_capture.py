"""PyTorch's caching-allocator actions as rocpd rows (--memory-allocation-trace), on real CPU
PyTorch through the stand-in of the allocator's trace hook (rocprof._torch_observer's
_standin_trace: synthetic TraceEntry actions into the same event function the real hook calls,
then _core's launch sites, the record buffers, the drain and the writer as in a GPU run): real
SQLite databases checked row by row against the data contract (level VIRTUAL, one category
each, the line that allocated), with ROCm's own memory_allocations view over them."""

from __future__ import annotations

import json
import sqlite3

import pytest
from rocm_views import connect_with_rocm_views, mismatches
from support import WORKLOADS, run_rocprof

from rocpd import _schema

PROGRAM = WORKLOADS / "torch_alloc_standin.py"
MiB = 1 << 20
SEG = 0x7F0000000000
GPU0, GPU1 = 2, 3  # rocpd_info_agent ids of devices 0 and 1 (CPU agent is 1)


def _line(marker):
    return next(i for i, text in enumerate(open(PROGRAM), 1) if text.rstrip().endswith(marker))


def _observer_or_skip():
    pytest.importorskip("torch")
    from rocprof import _core
    from rocprof.capture import autograd_sites

    why = autograd_sites.observer_unavailable()
    if why:
        pytest.skip(why)
    return _core


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The "plain" program under --memory-allocation-trace: (completed process, database)."""
    return _run(tmp_path_factory.mktemp("plain"), "plain")


def _run(tmp_path, *args, flags=("--memory-allocation-trace",), ok=True):
    _observer_or_skip()
    r = run_rocprof("run", "-d", tmp_path, "-o", "mem", *flags, PROGRAM, *args, timeout=240)
    if ok:
        assert r.returncode == 0, r.stderr[-3000:]
    return r, tmp_path / "mem_results.db"


def _rows(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        f"SELECT S.string, M.type, M.level, M.start, M.\"end\", M.agent_id, M.address, M.size, "
        f"M.queue_id, M.stream_id, M.extdata, {_schema.line_info_sql('E')} "
        "FROM rocpd_memory_allocate M JOIN rocpd_event E ON E.id = M.event_id "
        "JOIN rocpd_string S ON S.id = E.category_id ORDER BY M.start, M.id").fetchall()
    meta = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))
    con.close()
    return [(cat, typ, lvl, s, e, agent, addr, size, q, st, json.loads(ext), json.loads(li))
            for cat, typ, lvl, s, e, agent, addr, size, q, st, ext, li in rows], meta


def test_each_action_is_one_virtual_row_with_its_line(plain):
    r, db = plain
    rows, meta = _rows(db)
    got = [(cat, typ, lvl, agent, addr, size, li.get("line")) for cat, typ, lvl, _, _, agent,
           addr, size, _, _, _, li in rows]
    # Blocks are counted as torch counts allocated_bytes (512-byte rounding); FREE_COMPLETED and
    # SNAPSHOT are not stored.
    block = 3 * MiB + 512
    assert got == [
        ("TORCH_ALLOCATOR_SEGMENT", "ALLOC", "VIRTUAL", GPU0, SEG, 20 * MiB, _line("# LINE_SEGMENT")),
        ("TORCH_ALLOCATOR_BLOCK", "ALLOC", "VIRTUAL", GPU0, SEG, block, _line("# LINE_BLOCK")),
        ("TORCH_ALLOCATOR_BLOCK", "ALLOC", "VIRTUAL", GPU0, SEG + 4 * MiB, 512, _line("# LINE_SMALL")),
        ("TORCH_ALLOCATOR_BLOCK", "FREE", "VIRTUAL", GPU0, SEG, block, _line("# LINE_FREE")),
        # On a thread with no Python frames during backward(): the backward() call's line.
        ("TORCH_ALLOCATOR_BLOCK", "ALLOC", "VIRTUAL", GPU0, SEG + 8 * MiB, 4096,
         _line("# LINE_BACKWARD")),
        ("TORCH_ALLOCATOR_SEGMENT", "ALLOC", "VIRTUAL", GPU1, SEG + 64 * MiB, 2 * MiB, _line("# LINE_MAP")),
        ("TORCH_ALLOCATOR_SEGMENT", "FREE", "VIRTUAL", GPU1, SEG + 64 * MiB, 2 * MiB, _line("# LINE_UNMAP")),
        ("TORCH_ALLOCATOR_SEGMENT", "FREE", "VIRTUAL", GPU0, SEG, 20 * MiB, _line("# LINE_SEGMENT_FREE")),
    ]
    for _, _, _, start, end, _, _, _, queue, _, ext, li in rows:
        assert start == end and start > 0 and queue == 0 and ext == {}
        assert li["file"] == str(PROGRAM)
    assert [li["function"] for *_, li in rows][:4] == ["model_step"] * 4
    assert meta["rocprof.memory.allocator_events"] == "8"
    assert meta["rocprof.memory.dropped"] == "0"
    assert meta["rocprof.memory.unattributed"] == "0"
    # No GPU backend ran the launch sites: the allocator's capture did, and counts them.
    assert "wait_timeouts=0" in meta["rocprof.memory.launch_sites"], meta["rocprof.memory.launch_sites"]
    # This torch (CPU) has no CUDA allocator to hook: the source says so, and `rocprof info` too.
    status = json.loads(r.stdout.splitlines()[0])["status"]
    assert meta["rocprof.memory.source"] == status and status.startswith("none: "), meta
    info = run_rocprof("info")
    assert "torch-allocator" in info.stdout, info.stdout


def test_rocms_view_lists_them_and_real_rows_are_not_counted_twice(plain):
    _, db = plain
    assert mismatches(db) == {}
    con = connect_with_rocm_views(db)
    listed = con.execute("SELECT category, level, count(*), total(size) FROM temp.memory_allocations "
                         "GROUP BY 1, 2 ORDER BY 1").fetchall()
    # A reader summing REAL rows (the runtime's, none in a CPU run) is not given the allocator's.
    real = con.execute("SELECT count(*) FROM temp.memory_allocations WHERE level = 'REAL'").fetchone()
    con.close()
    assert listed == [("TORCH_ALLOCATOR_BLOCK", "VIRTUAL", 4, float(2 * (3 * MiB + 512) + 512 + 4096)),
                      ("TORCH_ALLOCATOR_SEGMENT", "VIRTUAL", 4, float(44 * MiB))]
    assert real == (0,)


def test_an_uncaught_out_of_memory_leaves_a_complete_database_with_the_oom_row(tmp_path):
    r, db = _run(tmp_path, "oom", ok=False)
    assert r.returncode != 0 and "OutOfMemoryError" in r.stderr, r.stderr[-2000:]
    rows, meta = _rows(db)
    assert meta["rocprof.status"] == "complete", meta.get("rocprof.status")
    oom = [row for row in rows if row[0] == "TORCH_ALLOCATOR_OOM"]
    assert len(oom) == 1
    cat, typ, lvl, _, _, agent, addr, size, _, _, ext, li = oom[0]
    assert (typ, lvl, agent, addr, size) == ("ALLOC", "VIRTUAL", GPU0, 0, 4096 * MiB)
    assert ext == {"device_free": 123 * MiB}
    assert li["line"] == _line("# LINE_OOM")
    # What was live at the failure is there too: the segment and the small block.
    assert [(c, t) for c, t, *_ in rows].count(("TORCH_ALLOCATOR_BLOCK", "ALLOC")) == 2
    assert meta["rocprof.memory.allocator_events"] == str(len(rows))


def test_actions_past_the_buffer_budget_are_dropped_and_counted(tmp_path):
    n = 400_000  # 51 MB of records in one burst against a 4 MiB budget
    _, db = _run(tmp_path, "burst", str(n), flags=("--memory-allocation-trace", "--buffer-budget", "4"))
    rows, meta = _rows(db)
    stored, dropped = int(meta["rocprof.memory.allocator_events"]), int(meta["rocprof.memory.dropped"])
    assert dropped > 0 and stored + dropped == n, meta
    assert len(rows) == stored
    assert int(meta["rocprof.dropped_records"]) >= dropped
    assert {li["line"] for *_, li in rows} == {_line("# LINE_BURST")}


def test_a_line_the_resolver_reaches_late_is_still_stored(tmp_path):
    """The program holds the GIL (one long C call) right after a new line's action: the record
    waits for the resolver in the drain's hands, not in the allocator's, and keeps its line."""
    _, db = _run(tmp_path, "gil", "10000000")
    rows, meta = _rows(db)
    assert meta["rocprof.memory.unattributed"] == "0"
    assert [(c, li.get("line")) for c, *_, li in rows] == [("TORCH_ALLOCATOR_BLOCK", _line("# LINE_GIL"))]


@pytest.mark.parametrize("flag", ["--allocator-trace", "--sys-trace"])
def test_the_allocator_alone_or_with_everything_gives_the_same_rows(tmp_path, flag):
    """--allocator-trace: the allocator's rows without asking for the runtime's allocations;
    --sys-trace: with everything else."""
    _, db = _run(tmp_path, "plain", flags=(flag,))
    rows, meta = _rows(db)
    assert [(c, t, size, li["line"]) for c, t, *_, size, _, _, _, li in rows][:4] == [
        ("TORCH_ALLOCATOR_SEGMENT", "ALLOC", 20 * MiB, _line("# LINE_SEGMENT")),
        ("TORCH_ALLOCATOR_BLOCK", "ALLOC", 3 * MiB + 512, _line("# LINE_BLOCK")),
        ("TORCH_ALLOCATOR_BLOCK", "ALLOC", 512, _line("# LINE_SMALL")),
        ("TORCH_ALLOCATOR_BLOCK", "FREE", 3 * MiB + 512, _line("# LINE_FREE"))]
    assert meta["rocprof.memory.allocator_events"] == "8"
    options = json.loads(meta["rocprof.options"])
    assert options["allocator_trace"] != options["memory_allocation_trace"]


def test_no_allocator_rows_without_the_option(tmp_path):
    _, db = _run(tmp_path, "plain", flags=("--marker-trace",))
    rows, meta = _rows(db)
    assert rows == [] and "rocprof.memory.source" not in meta
