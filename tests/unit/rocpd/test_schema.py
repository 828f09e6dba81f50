import re
import sqlite3

from rocpd import _schema
from rocpd.testing import DatabaseBuilder

DOC_TABLES = _schema.TABLES


def test_sql_files_are_embeddable_and_plain():
    for name in ("tables.sql", "table_views.sql", "views.sql"):
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
        cols = [r[1] for r in c.execute(f'PRAGMA table_info("rocpd_{t}{suffix}")')]
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
