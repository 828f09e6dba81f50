import os
import re
import sqlite3

from rocpd import _schema
from rocpd.testing import DatabaseBuilder

DOC_TABLES = _schema.TABLES


def test_sql_files_are_embeddable_and_plain():
    for name in ("tables.sql", "table_views.sql", "views.sql", "indexes.sql"):
        text = _schema.read(name)
        assert ')rocpd_sql"' not in text
        for line in text.splitlines():
            if line.lstrip().startswith("--"):
                assert ";" not in line, f"{name}: semicolon in comment would split a statement"
    assert "{{" not in _schema.read("views.sql")
    views = _schema.read("views.sql")
    assert not re.search(r"rocpd_\w+_[0-9a-f]{8}_", views)


def test_every_table_suffixed_with_guid_default(tmp_path):
    b = DatabaseBuilder(tmp_path / "a.db")
    suffix = _schema.suffix_of(b.guid)
    b.close()
    c = sqlite3.connect(tmp_path / "a.db")
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for t in DOC_TABLES:
        assert f"rocpd_{t}{suffix}" in tables
        cols = [r[1] for r in c.execute(f'PRAGMA table_xinfo("rocpd_{t}{suffix}")')]
        assert cols[0] == "id"
        if t != "metadata":
            assert cols[1] == "guid"
    (guid,) = c.execute(f'SELECT DISTINCT guid FROM "rocpd_info_node{suffix}"').fetchone()
    assert guid == b.guid
    meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["schema_version"] == "3" and meta["uuid"] == suffix and meta["guid"] == b.guid


def test_view_columns_match_contract(tmp_path):
    DatabaseBuilder(tmp_path / "a.db").close()
    c = sqlite3.connect(tmp_path / "a.db")
    expect = {
        "top_kernels": ["name", "total_calls", "total_duration", "average", "percentage"],
        "top": ["name", "total_calls", "total_duration", "average", "percentage"],
        "busy": ["agent_id", "type", "GpuTime", "WallTime", "Busy"],
        "regions": ["id", "guid", "category", "name", "nid", "pid", "tid", "start", "end",
                    "duration", "event_id", "stack_id", "parent_stack_id", "corr_id", "extdata",
                    "call_stack", "line_info"],
        "kernels": ["id", "guid", "tid", "category", "region", "name", "nid", "pid",
                    "agent_abs_index", "agent_log_index", "agent_type_index", "agent_type",
                    "code_object_id", "kernel_id", "dispatch_id", "stream_id", "queue_id", "queue",
                    "stream", "start", "end", "duration", "grid_x", "grid_y", "grid_z",
                    "workgroup_x", "workgroup_y", "workgroup_z", "lds_size", "scratch_size",
                    "vgpr_count", "accum_vgpr_count", "sgpr_count", "static_lds_size",
                    "static_scratch_size", "stack_id", "parent_stack_id", "corr_id", "roctx_range"],
    }
    for view, cols in expect.items():
        got = [d[0] for d in c.execute(f'SELECT * FROM "{view}" LIMIT 0').description]
        assert got == cols, view
    for view in ("samples", "regions_and_samples", "memory_copies", "memory_allocations",
                 "processes", "threads", "code_objects", "kernel_symbols", "pmc_info",
                 "pmc_events", "counters_collection", "scratch_memory", "stream_args"):
        c.execute(f'SELECT * FROM "{view}" LIMIT 0')


def _kernel_db(path, guid_per_row):
    with DatabaseBuilder(path, guid_per_row=guid_per_row) as b:
        b.kernels_bulk([(f"k{i % 7}", 1000 * i, 1000 * i + 500) for i in range(20_000)])
    return b.guid


def test_guid_is_read_on_every_row_but_stored_only_with_guid_per_row(tmp_path):
    """The contract's guid column on each row, without its 36 bytes per row by default."""
    sizes = {}
    for per_row in (False, True):
        path = tmp_path / f"{per_row}.db"
        guid = _kernel_db(path, per_row)
        c = sqlite3.connect(path)
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
        assert meta["rocprof.guid_column"] == ("stored" if per_row else "generated")
        for t in ("kernel_dispatch", "event", "string", "info_process"):
            full = f"rocpd_{t}{_schema.suffix_of(guid)}"
            assert c.execute(f'SELECT DISTINCT guid FROM "{full}"').fetchall() == [(guid,)], t
            hidden = {r[1]: r[6] for r in c.execute(f'PRAGMA table_xinfo("{full}")')}
            assert hidden["guid"] == (0 if per_row else 2), t
        # ROCm's readers list columns with SELECT * (time_window.get_column_names).
        cur = c.execute("SELECT * FROM rocpd_kernel_dispatch LIMIT 0")
        assert [d[0] for d in cur.description][:2] == ["id", "guid"]
        c.close()
        sizes[per_row] = os.path.getsize(path)
    # Two rows per kernel (dispatch + event), 36 bytes of guid text each.
    saved = (sizes[True] - sizes[False]) / 20_000
    assert 60 < saved < 90, saved


def test_merge_copies_generated_and_stored_guid_tables(tmp_path):
    from rocpd.io.merge import merge_files

    guids = [_kernel_db(tmp_path / "a.db", False), _kernel_db(tmp_path / "b.db", True)]
    merge_files([tmp_path / "a.db", tmp_path / "b.db"], str(tmp_path / "m.db"))
    c = sqlite3.connect(tmp_path / "m.db")
    got = dict(c.execute("SELECT guid, count(*) FROM rocpd_kernel_dispatch GROUP BY guid"))
    assert got == {guids[0]: 20_000, guids[1]: 20_000}
