"""What the writer pays per record on disk and per row in SQLite (cpp/storage/rows_batch.cpp,
rocpd/schema/tables.sql and indexes.sql): rows go in batches and keep every row, its order and
its references; the record tables' nid and pid are generated, not stored; the start indexes are
built at close, full, and the finished file keeps no free pages. ROCm's views read every row."""

from __future__ import annotations

import random
import sqlite3

import pytest
from rocm_views import mismatches

from rocpd.testing import DatabaseBuilder

RECORD_TABLES = ("region", "kernel_dispatch", "memory_copy", "memory_allocate", "pc_sample")


def _build(path, kernels=1003, guid_per_row=False, commit_every=None):
    """Kernels with jittered starts (CUPTI returns them about, not exactly, in start order),
    a copy, an API call and a sample between them, a ROCTx range around all."""
    rng = random.Random(3)
    with DatabaseBuilder(path, pid=424242, guid_per_row=guid_per_row) as b:
        t = 86_400_000_000_000
        outer = b.marker("all", t, t + kernels * 10_000 + 50_000)
        for i in range(kernels):
            s = t + i * 10_000 + rng.randrange(0, 30_000)
            corr = b.next_correlation()
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", s - 3_000, s - 1_000,
                     correlation_id=corr, range_corr=outer)
            b.kernel(("gemm", "relu", "softmax")[i % 3], s, s + 5_000, correlation_id=corr,
                     range_corr=outer, site=("model.py", 10 + i % 5, "forward"))
            if i % 7 == 0:
                b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", s + 100, s + 900, 4096)
            if i % 5 == 0:
                b.sample(None, s + 50, call_stack=["main", "train", f"step{i % 3}"])
            if commit_every and i % commit_every == commit_every - 1:
                b._w.commit()
        b.allocation("ALLOC", t + 10, t + 20, 1 << 20)
    return path


def test_batched_rows_keep_every_row_its_order_and_its_references(tmp_path):
    db = _build(tmp_path / "b.db", commit_every=100)
    c = sqlite3.connect(db)
    n = 1003
    assert c.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone() == (n,)
    # ids in the order the records came (the builder's dispatch ids are its correlation ids)
    ids = c.execute("SELECT id, dispatch_id FROM rocpd_kernel_dispatch ORDER BY id").fetchall()
    assert [i for i, _ in ids] == list(range(1, n + 1))
    assert [d for _, d in ids] == sorted(d for _, d in ids)
    # every kernel's event is its own: same correlation id, and its launch call shares it
    corr = dict(c.execute("SELECT id, correlation_id FROM rocpd_event"))
    launches = {corr[e] for (e,) in c.execute("SELECT event_id FROM rocpd_region")}
    for event_id, dispatch_id in c.execute("SELECT event_id, dispatch_id FROM rocpd_kernel_dispatch"):
        assert corr[event_id] == dispatch_id and dispatch_id in launches
    events = c.execute("SELECT count(*), count(DISTINCT id) FROM rocpd_event").fetchone()
    referenced = c.execute("""SELECT count(*) FROM (
        SELECT event_id FROM rocpd_region UNION ALL SELECT event_id FROM rocpd_kernel_dispatch
        UNION ALL SELECT event_id FROM rocpd_memory_copy UNION ALL SELECT event_id FROM rocpd_sample
        UNION ALL SELECT event_id FROM rocpd_memory_allocate)""").fetchone()[0]
    assert events[0] == events[1] and referenced <= events[0]
    assert c.execute("SELECT count(*) FROM rocpd_memory_copy").fetchone() == (144,)
    assert c.execute("SELECT count(*) FROM rocpd_sample").fetchone() == (201,)
    assert c.execute("SELECT count(*) FROM rocpd_region").fetchone() == (n + 1,)
    assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert mismatches(db) == {}


def test_a_bad_row_in_a_batch_loses_only_itself(tmp_path, capfd):
    """Two ROCTx ranges with one correlation id (the region's primary key): the second cannot
    be stored; the rows batched with it still are."""
    with DatabaseBuilder(tmp_path / "dup.db") as b:
        t = 1_000_000
        for i in range(10):
            b.kernel("k", t + i * 100, t + i * 100 + 50)
        b._w.region("MARKER_CORE_API", "roctxRangePushA", t, t + 10, tid=b.pid,
                    correlation_id=(1 << 32) | 77, message="a")
        b._w.region("MARKER_CORE_API", "roctxRangePushA", t + 20, t + 30, tid=b.pid,
                    correlation_id=(1 << 32) | 77, message="b")
        for i in range(10):
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t + i, t + i + 1)
    assert "UNIQUE constraint failed" in capfd.readouterr().err
    c = sqlite3.connect(tmp_path / "dup.db")
    assert c.execute("SELECT count(*) FROM rocpd_region").fetchone() == (11,)
    assert c.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone() == (10,)
    assert c.execute("SELECT count(*) FROM rocpd_event").fetchone() == (22,)


@pytest.mark.parametrize("guid_per_row", [False, True])
def test_record_tables_generate_nid_and_pid(tmp_path, guid_per_row):
    db = _build(tmp_path / "p.db", kernels=40, guid_per_row=guid_per_row)
    c = sqlite3.connect(db)
    for t in RECORD_TABLES:
        (name,) = c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE ?",
                            (f"rocpd_{t}_%",)).fetchone()
        hidden = {r[1]: r[6] for r in c.execute(f'PRAGMA table_xinfo("{name}")')}
        # 2: a VIRTUAL generated column (nothing stored per row); 0: stored
        assert hidden["nid"] == hidden["pid"] == (0 if guid_per_row else 2), t
        assert hidden["guid"] == (0 if guid_per_row else 2)
    rows = c.execute("SELECT DISTINCT nid, pid FROM rocpd_kernel_dispatch").fetchall()
    assert rows == [(1, 424242)]
    assert c.execute("SELECT DISTINCT pid FROM rocpd_region").fetchall() == [(424242,)]
    assert mismatches(db) == {}


def test_start_indexes_are_built_at_close_full_and_no_page_is_free(tmp_path):
    path = tmp_path / "i.db"
    b = DatabaseBuilder(path)
    rng = random.Random(5)
    t = 10**12
    for i in range(3000):
        s = t + i * 1_000 + rng.randrange(0, 20_000)
        b.kernel("k", s, s + 500)
    b._w.commit()
    live = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert live.execute("SELECT count(*) FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
                        ).fetchone() == (0,)  # none while recording: no per-row index insert
    assert live.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0] > 0
    live.close()
    b.close()
    c = sqlite3.connect(path)
    idx = {r[0].split("_0")[0] for r in c.execute(
        "SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}
    assert idx == {"rocpd_region_start", "rocpd_kernel_dispatch_start", "rocpd_memory_copy_start",
                   "rocpd_sample_timestamp"}
    plan = " ".join(r[3] for r in c.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM rocpd_kernel_dispatch WHERE start > 5 ORDER BY start"))
    assert "rocpd_kernel_dispatch_start" in plan
    try:
        pages, unused, size = c.execute(
            "SELECT count(*), sum(unused), sum(pgsize) FROM dbstat WHERE name LIKE "
            "'rocpd_kernel_dispatch_start%' AND pagetype = 'leaf'").fetchone()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat")
    # Less than one page's worth of room left (the last page's): grown row by row out of start
    # order, the same index left ~13 % of every page empty.
    assert pages > 5 and unused < 4096
    assert c.execute("PRAGMA freelist_count").fetchone() == (0,)
    assert c.execute("PRAGMA journal_mode").fetchone() == ("delete",)


def test_nested_ranges_ending_inner_first_still_fill_their_pages(tmp_path):
    """Nested ROCTx ranges reach the writer inner range first, so their ids (their correlation
    ids) come as 2, 1, 4, 3, ...: rows inserted in that order split pages half-empty."""
    path = tmp_path / "n.db"
    with DatabaseBuilder(path, pid=424242) as b:  # row sizes where it shows (a 3-byte tid)
        t = 10**12
        for k in range(6000):
            outer, inner = (1 << 32) | (2 * k + 1), (1 << 32) | (2 * k + 2)
            s = t + k * 1_000
            b._w.region("MARKER_CORE_API", "roctxRangePushA", s + 10, s + 20, tid=b.pid,
                        correlation_id=inner, message="inner", range_corr=outer)
            b._w.region("MARKER_CORE_API", "roctxRangePushA", s, s + 30, tid=b.pid,
                        correlation_id=outer, message="outer")
    c = sqlite3.connect(path)
    assert c.execute("SELECT count(*), min(id), max(id) FROM rocpd_region").fetchone() == (
        12000, (1 << 32) | 1, (1 << 32) | 12000)
    try:
        unused, size = c.execute("SELECT sum(unused), sum(pgsize) FROM dbstat WHERE name LIKE "
                                 "'rocpd_region_%' AND name NOT LIKE '%start%' "
                                 "AND pagetype = 'leaf'").fetchone()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat")
    assert unused / size < 0.02
