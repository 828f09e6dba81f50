"""A database written by the real launcher, checked against rocpd-schema.md (the contract):
table and view names and columns, the suffix and metadata rows, nesting, the clock domain."""

from __future__ import annotations

import json
import os
import time

import pytest
from support import open_db, run_rocprof

# Columns after (id, guid) as rocpd-schema.md lists them.
TABLES = {
    "string": ["string"],
    "info_node": ["hash", "machine_id", "system_name", "hostname", "release", "version",
                  "hardware_name", "domain_name"],
    "info_process": ["nid", "ppid", "pid", "init", "fini", "start", "end", "command",
                     "environment", "extdata"],
    "info_thread": ["nid", "ppid", "pid", "tid", "name", "start", "end", "extdata"],
    "info_agent": ["nid", "pid", "type", "absolute_index", "logical_index", "type_index", "uuid",
                   "name", "model_name", "vendor_name", "product_name", "user_name", "extdata"],
    "info_queue": ["nid", "pid", "name", "extdata"],
    "info_stream": ["nid", "pid", "name", "extdata"],
    "info_pmc": ["nid", "pid", "agent_id", "target_arch", "event_code", "instance_id", "name",
                 "symbol", "description", "long_description", "component", "units", "value_type",
                 "block", "expression", "is_constant", "is_derived", "extdata"],
    "info_code_object": ["nid", "pid", "agent_id", "uri", "load_base", "load_size", "load_delta",
                         "storage_type", "extdata"],
    "info_kernel_symbol": ["nid", "pid", "code_object_id", "kernel_name", "display_name",
                           "kernel_object", "kernarg_segment_size", "kernarg_segment_alignment",
                           "group_segment_size", "private_segment_size", "sgpr_count",
                           "arch_vgpr_count", "accum_vgpr_count", "extdata"],
    "track": ["nid", "pid", "tid", "name_id", "extdata"],
    "event": ["category_id", "stack_id", "parent_stack_id", "correlation_id", "call_stack",
              "line_info", "extdata"],
    "arg": ["event_id", "position", "type", "name", "value", "extdata"],
    "pmc_event": ["event_id", "pmc_id", "value", "extdata"],
    "region": ["nid", "pid", "tid", "start", "end", "name_id", "event_id", "extdata"],
    "sample": ["track_id", "timestamp", "event_id", "extdata"],
    "kernel_dispatch": ["nid", "pid", "tid", "agent_id", "kernel_id", "dispatch_id", "queue_id",
                        "stream_id", "start", "end", "private_segment_size", "group_segment_size",
                        "workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "grid_size_x",
                        "grid_size_y", "grid_size_z", "region_name_id", "event_id", "extdata"],
    "memory_copy": ["nid", "pid", "tid", "start", "end", "name_id", "dst_agent_id", "dst_address",
                    "src_agent_id", "src_address", "size", "queue_id", "stream_id",
                    "region_name_id", "event_id", "extdata"],
    "memory_allocate": ["nid", "pid", "tid", "agent_id", "type", "level", "start", "end",
                        "address", "size", "queue_id", "stream_id", "event_id", "extdata"],
}

VIEWS = {
    "kernels": ["id", "guid", "tid", "category", "region", "name", "nid", "pid", "agent_abs_index",
                "agent_log_index", "agent_type_index", "agent_type", "code_object_id", "kernel_id",
                "dispatch_id", "stream_id", "queue_id", "queue", "stream", "start", "end",
                "duration", "grid_x", "grid_y", "grid_z", "workgroup_x", "workgroup_y",
                "workgroup_z", "lds_size", "scratch_size", "vgpr_count", "accum_vgpr_count",
                "sgpr_count", "static_lds_size", "static_scratch_size", "stack_id",
                "parent_stack_id", "corr_id", "roctx_range"],
    "regions": ["id", "guid", "category", "name", "nid", "pid", "tid", "start", "end", "duration",
                "event_id", "stack_id", "parent_stack_id", "corr_id", "extdata", "call_stack",
                "line_info"],
    "top_kernels": ["name", "total_calls", "total_duration", "average", "percentage"],
    "top": ["name", "total_calls", "total_duration", "average", "percentage"],
    "busy": ["agent_id", "type", "GpuTime", "WallTime", "Busy"],
}
OTHER_VIEWS = ["samples", "regions_and_samples", "memory_copies", "memory_allocations", "processes",
               "threads", "code_objects", "kernel_symbols", "pmc_info", "pmc_events",
               "counters_collection", "scratch_memory", "stream_args"]


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, request):
    out = tmp_path_factory.mktemp("contract")
    from support import WORKLOADS

    before = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    r = run_rocprof("run", "-d", out, "-o", "run1", WORKLOADS / "nested_ranges.py", "x", "--flag")
    after = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    assert r.returncode == 0, r.stderr
    db = out / "run1_results.db"
    assert db.exists(), r.stderr
    return dict(db=db, stdout=r.stdout, stderr=r.stderr, before=before, after=after)


def columns(con, name):
    # table_xinfo: the guid column is generated (tables.sql), and table_info leaves those out.
    return [row[1] for row in con.execute(f'PRAGMA table_xinfo("{name}")')]


def test_metadata_suffix_and_guid(profiled):
    con = open_db(profiled["db"])
    meta = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["schema_version"] == "3"
    guid = meta["guid"]
    assert meta["uuid"] == "_" + guid.replace("-", "_")
    assert guid[14] == "7", "guid must be a version-7 UUID"
    assert meta["rocprof.clock_domain"] == "CLOCK_BOOTTIME"
    assert meta["rocprof.dropped_records"] == "0"
    assert json.loads(meta["rocprof.options"])["output_file"] == "run1"
    assert meta["rocprof.version"]


def test_every_table_suffixed_with_its_columns(profiled):
    con = open_db(profiled["db"])
    suffix = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))["uuid"]
    guid = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))["guid"]
    for name, cols in TABLES.items():
        table = f"rocpd_{name}{suffix}"
        assert columns(con, table) == ["id", "guid", *cols], table
        assert columns(con, f"rocpd_{name}") == ["id", "guid", *cols], f"plain view rocpd_{name}"
        bad = con.execute(f'SELECT count(*) FROM "{table}" WHERE guid != ?', (guid,)).fetchone()[0]
        assert bad == 0, f"{table} rows must carry the database guid"
    assert columns(con, f"rocpd_metadata{suffix}") == ["id", "tag", "value"]


def test_human_readable_views(profiled):
    con = open_db(profiled["db"])
    for name, cols in VIEWS.items():
        assert columns(con, name) == cols, name
    for name in OTHER_VIEWS:
        assert columns(con, name), f"view {name} missing"
        con.execute(f"SELECT * FROM {name} LIMIT 1").fetchall()  # the view must be valid SQL


def test_ranges_nested_as_written(profiled):
    con = open_db(profiled["db"])
    # As ROCm's views: a range is named by its API function, the message is in extdata.
    msg = "json_extract(extdata, '$.message')"
    rows = con.execute(f"SELECT {msg}, start, end, category, tid FROM regions ORDER BY start"
                       ).fetchall()
    names = [r[0] for r in rows]
    assert names.count("outer") == 1 and names.count("inner") == 3 and names.count("leaf") == 3
    assert {r[3] for r in rows} == {"MARKER_CORE_API"}
    assert {n for (n,) in con.execute("SELECT name FROM regions")} == {"roctxRangePushA"}
    # A mark is an instant: a sample on its thread's marker track, as ROCm stores it.
    marks = con.execute(f"SELECT {msg}, start, end, category, tid FROM regions_and_samples "
                        "WHERE category = 'MARKER_CORE_API' AND start = end").fetchall()
    assert [m[0] for m in marks] == ["checkpoint"]
    rows += marks
    outer = next(r for r in rows if r[0] == "outer")
    inners = [r for r in rows if r[0] == "inner"]
    leaves = [r for r in rows if r[0] == "leaf"]
    for inner, leaf in zip(inners, leaves, strict=True):
        assert outer[1] <= inner[1] <= leaf[1] <= leaf[2] <= inner[2] <= outer[2]
    assert all(a[2] <= b[1] for a, b in zip(inners, inners[1:], strict=False)), "inner ranges run one after another"
    mark = next(r for r in rows if r[0] == "checkpoint")
    assert mark[1] == mark[2] and inners[-1][2] <= mark[1] <= outer[2]


def test_timestamps_are_boottime(profiled):
    con = open_db(profiled["db"])
    lo, hi = con.execute("SELECT min(start), max(end) FROM regions").fetchone()
    assert profiled["before"] < lo <= hi < profiled["after"]
    start, init, fini = con.execute("SELECT start, init, fini FROM rocpd_info_process").fetchone()
    assert profiled["before"] - 2_000_000_000 < start <= init <= lo and hi <= fini < profiled["after"]


def test_message_in_event_extdata(profiled):
    con = open_db(profiled["db"])
    rows = con.execute(
        "SELECT s.string, e.extdata, r.id, e.correlation_id, e.stack_id, e.parent_stack_id "
        "FROM rocpd_region r JOIN rocpd_event e ON e.id = r.event_id "
        "AND e.guid = r.guid JOIN rocpd_string s ON s.id = r.name_id AND s.guid = r.guid").fetchall()
    # As rocprofv3 writes ROCTx: the region is named by the API function, the message is in the
    # event's extdata, the region's id is its correlation id (= stack_id), and parent_stack_id
    # is the enclosing range's.
    assert {r[0] for r in rows} == {"roctxRangePushA"}
    assert sorted(json.loads(r[1])["message"] for r in rows) == sorted(
        ["outer"] + ["inner"] * 3 + ["leaf"] * 3)
    by_id = {r[2]: r for r in rows}
    for _, extdata, rid, corr, stack, parent in rows:
        assert rid == corr == stack and corr >= 2**32
        message = json.loads(extdata)["message"]
        expected_parent = {"outer": None, "inner": "outer", "leaf": "inner"}[message]
        if expected_parent is None:
            assert parent == 0
        else:
            assert json.loads(by_id[parent][1])["message"] == expected_parent


def test_process_thread_and_cpu_agent_rows(profiled):
    con = open_db(profiled["db"])
    pid, command = con.execute("SELECT pid, command FROM rocpd_info_process").fetchone()
    assert "nested_ranges.py" in command
    tids = {r[0] for r in con.execute("SELECT tid FROM regions")}
    assert tids <= {r[0] for r in con.execute("SELECT tid FROM rocpd_info_thread")}
    assert con.execute("SELECT count(*) FROM rocpd_info_agent WHERE type = 'CPU'").fetchone()[0] >= 1
    # The CPU's core count (agent_info.csv's Cpu_Cores_Count) is a metadata row: ROCm's reader
    # loads an agent's extdata, when it is more than "{}", as a whole rocprofiler agent.
    assert con.execute("SELECT extdata FROM rocpd_info_agent WHERE type = 'CPU'").fetchone()[0] == "{}"
    cores = con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'rocprof.cpu_cores'").fetchone()
    assert cores == (str(os.cpu_count()),), cores
    assert con.execute("SELECT count(*) FROM rocpd_info_node").fetchone()[0] == 1


def test_script_sees_plain_python_semantics(profiled):
    facts = json.loads(profiled["stdout"].strip().splitlines()[-1])
    assert facts["name"] == "__main__"
    assert facts["argv"][0].endswith("nested_ranges.py") and facts["argv"][1:] == ["x", "--flag"]
    assert facts["path0"] == str(__import__("pathlib").Path(facts["file"]).parent)
    assert "results written to" in profiled["stderr"]
