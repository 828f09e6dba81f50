"""rocprofv3's CSV set: ``<prefix>_kernel_trace.csv``, ``<prefix>_<api>_api_trace.csv``,
``<prefix>_memory_copy_trace.csv``, ``<prefix>_memory_allocation_trace.csv``,
``<prefix>_scratch_memory_trace.csv``,
``<prefix>_agent_info.csv``, ``<prefix>_counter_collection.csv`` (:mod:`rocpd.counters.pmc`) and the stats
files. With ``guid=True``, the columns ROCm's ``rocpd convert -f csv`` writes (its csv.cpp): a
first ``Guid`` column (``Pid``, holding the guid, in counter_collection.csv, as ROCm writes it).

Correlation_Id is the record's internal correlation id, ``rocpd_event.stack_id`` (shared by an API
call and the GPU work it enqueued, in ROCm's databases and ours); Queue_Id the runtime's queue
id (:func:`rocpd._schema.queue_handle_sql`). marker_api_trace.csv holds ROCTx ranges and marks
(instants), named by their message.
Strings are quoted, numbers are not, as rocprofv3 writes them."""

from __future__ import annotations

import contextlib
import csv
import io
import os

from .. import _schema
from ..counters.pmc import write_counter_collection
from ..io.filters import Filter, name_mask, resolve
from ..io.output_file import open_output
from ..progress import Rows, iterate
from ..summary.stats import stem_for, write_stats_csv
from . import agent_sql, in_folder

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".csv", "target": "prefix", "rocprofv3": "csv"}

KERNEL_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
                 "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size",
                 "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X",
                 "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]
API_HEADER = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id", "Start_Timestamp",
              "End_Timestamp"]
COPY_HEADER = ["Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id",
               "Correlation_Id", "Start_Timestamp", "End_Timestamp"]
ALLOC_HEADER = ["Kind", "Operation", "Agent_Id", "Allocation_Size", "Address", "Correlation_Id",
                "Start_Timestamp", "End_Timestamp"]
# No Guid column here even in ROCm's rocpd convert form (its csv.cpp writes none).
SCRATCH_HEADER = ["Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags",
                  "Start_Timestamp", "End_Timestamp"]

# Value formats follow ROCm's rocprofiler-sdk (rocm-systems), source/lib/output/generateCSV.cpp and
# metadata.cpp (create_agent_index): agents are "Agent <logical index>" (rocprofv3's default
# --agent-index relative, output_config.cpp), addresses "0x" + 16 hex digits, operation
# MEMORY_ALLOCATION_ALLOCATE (stored type ALLOC, as ROCm's rocpd csv.cpp maps it), no agent on frees.
_AGENT = "'Agent ' || {c}"
# Each queue's handle is found once (LIMIT/OFFSET: a table made before the scan, not a JSON
# parse per dispatch); a dispatch without a queue row keeps its stored id, as queue_handle_sql.
_QUEUE_HANDLES = ("SELECT QQ.id AS qh_id, QQ.guid AS qh_guid, "
                  + _schema.queue_handle_sql("QQ.id", "QQ.guid")
                  + " AS qh_handle FROM rocpd_info_queue QQ LIMIT -1 OFFSET 0")
_KERNEL_SQL = ("SELECT guid, 'KERNEL_DISPATCH', " + _AGENT.format(c="agent_log_index") + ","
               " COALESCE(qh_handle, queue_id), stream_id, tid, dispatch_id, kernel_id, name,"
               " COALESCE(stack_id, 0), start, \"end\", lds_size, scratch_size, vgpr_count,"
               " accum_vgpr_count, sgpr_count, workgroup_x, workgroup_y, workgroup_z, grid_x,"
               " grid_y, grid_z FROM kernels LEFT JOIN (" + _QUEUE_HANDLES + ")"
               " ON qh_id = queue_id AND qh_guid = guid WHERE {w} ORDER BY start")
# API calls and ROCTx ranges (regions), and ROCTx marks (instants, stored as samples).
_API_SQL = (f"SELECT guid, category, {_schema.region_name_sql()}, pid, tid, COALESCE(stack_id, 0),"
            ' start, "end" FROM regions WHERE {w} UNION ALL'
            f" SELECT guid, category, {_schema.region_name_sql()}, pid, tid, COALESCE(stack_id, 0),"
            " start, start FROM sample_regions WHERE ({w}) AND category LIKE 'MARKER%'"
            " ORDER BY start")
_COPY_SQL = ("SELECT guid, 'MEMORY_COPY', name, stream_id, " + _AGENT.format(c="src_agent_log_index")
             + ", " + _AGENT.format(c="dst_agent_log_index") + ", COALESCE(stack_id, 0),"
             " start, \"end\" FROM memory_copies WHERE {w} ORDER BY start")
_ALLOC_SQL = ("SELECT guid, 'MEMORY_ALLOCATION', 'MEMORY_ALLOCATION_' || CASE COALESCE(type, 'UNKNOWN')"
              " WHEN 'ALLOC' THEN 'ALLOCATE' ELSE COALESCE(type, 'UNKNOWN') END,"
              " " + _AGENT.format(c="agent_log_index") + ", size, address, COALESCE(stack_id, 0),"
              " start, \"end\" FROM memory_allocations WHERE {w} ORDER BY start")

# Scratch-memory operations (level 'SCRATCH'), as ROCm's scratch_memory view gives them.
_SCRATCH_SQL = ("SELECT guid, 'SCRATCH_MEMORY', 'SCRATCH_MEMORY_' || COALESCE(operation, 'UNKNOWN'), "
                + _AGENT.format(c="agent_log_index") + ", queue_id, tid, alloc_flags, start,"
                " \"end\" FROM scratch_memory WHERE {w} ORDER BY start")
# The usual type of each column of those queries: t text, i integer (see _lines_sql).
_KERNEL_KINDS = "ttt" + "iiiii" + "t" + "i" * 14
_COPY_KINDS = "tttittiii"
_API_KINDS = "tttiiiii"


# The trace files are formatted by SQLite, one string per row, and written a chunk at a time: a
# Python object per cell costs more than the query itself, and a table held whole ~700 bytes a
# row (7 GB for 10M kernels); a chunk bounds the memory whatever the number of records.
_CHUNK = 5_000
_CELL_FN = "rocpd_csv_cell"


def _cell(value) -> str:
    """A real or blob cell as csv.writer writes it: SQLite's text of a real is not Python's."""
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="").writerow([value])
    return buf.getvalue()


def _sql_cell(c: str) -> str:
    """Column ``c`` as csv.writer writes it under QUOTE_NONNUMERIC: an integer bare, text quoted
    with its quotes doubled, NULL as "", a real or blob (rare) by :func:`_cell`."""
    return (f"CASE typeof({c}) WHEN 'integer' THEN {c} WHEN 'text' THEN"
            f" '\"' || replace({c}, '\"', '\"\"') || '\"' WHEN 'null' THEN '\"\"'"
            f" ELSE {_CELL_FN}({c}) END")


def _lines_sql(sql: str, kinds: str, first: int, extra: tuple[int, ...] = ()) -> str:
    """``sql`` as csv.writer's lines of its columns from ``first`` on, each followed by the
    columns ``extra`` as they are. ``kinds``: each column's usual type, "t" text or "i" integer;
    a row of those types is one printf (%w doubles quotes), twice as fast as :func:`_sql_cell`'s
    concatenation, which writes any other. LIMIT/OFFSET keeps SQLite from flattening ``sql``
    into the line, which would evaluate a column (the queue's subquery) at each use."""
    names = [f"c{i}" for i in range(len(kinds))]
    usual = " AND ".join(f"typeof({c}) = '{'text' if k == 't' else 'integer'}'"
                         for c, k in zip(names[first:], kinds[first:], strict=True))
    fmt = ",".join('"%w"' if k == "t" else "%d" for k in kinds[first:])
    cells = " || ',' || ".join(_sql_cell(c) for c in names[first:])
    line = (f"CASE WHEN {usual} THEN printf('{fmt}\r\n', {', '.join(names[first:])})"
            f" ELSE {cells} || char(13, 10) END")
    more = "".join(f", c{i}" for i in extra)
    return f"WITH t({', '.join(names)}) AS ({sql} LIMIT -1 OFFSET 0) SELECT {line}{more} FROM t"


def _chunks(conn, sql: str, params):
    """The rows of ``sql``, a list of at most _CHUNK at a time."""
    conn.create_function(_CELL_FN, 1, _cell, deterministic=True)
    cur = conn.execute(sql, params)
    while rows := cur.fetchmany(_CHUNK):
        yield rows


def _scratch_row(row):
    """Flags stored as text ("1") are written as the number they are."""
    flags = row[6]
    if isinstance(flags, str) and flags.lstrip("-").isdigit():
        flags = int(flags)
    return (*row[1:6], flags, *row[7:])


# rocprofv3 names the agent of an allocation only; ROCm's rocpd convert (csv.cpp) of every
# operation but a free (scratch reclaims included).
_AGENTS_WITH_ID = ("MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_VMEM_ALLOCATE")
_NO_AGENT = ("MEMORY_ALLOCATION_FREE", "MEMORY_ALLOCATION_VMEM_FREE")
_MASK64 = (1 << 64) - 1

# agent_info.csv columns (generateCSV.cpp, generate_csv for agent_info): rows sorted by Node_Id.
AGENT_INFO_HEADER = [
    "Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count", "Cpu_Core_Id_Base",
    "Simd_Id_Base", "Max_Waves_Per_Simd", "Lds_Size_In_Kb", "Gds_Size_In_Kb", "Num_Gws",
    "Wave_Front_Size", "Num_Xcc", "Cu_Count", "Array_Count", "Num_Shader_Banks",
    "Simd_Arrays_Per_Engine", "Cu_Per_Simd_Array", "Simd_Per_Cu", "Max_Slots_Scratch_Cu",
    "Gfx_Target_Version", "Vendor_Id", "Device_Id", "Location_Id", "Domain", "Drm_Render_Minor",
    "Num_Sdma_Engines", "Num_Sdma_Xgmi_Engines", "Num_Sdma_Queues_Per_Engine", "Num_Cp_Queues",
    "Max_Engine_Clk_Ccompute", "Max_Engine_Clk_Fcompute", "Sdma_Fw_Version", "Fw_Version",
    "Capability", "Cu_Per_Engine", "Max_Waves_Per_Cu", "Family_Id", "Workgroup_Max_Size",
    "Grid_Max_Size", "Local_Mem_Size", "Hive_Id", "Gpu_Id", "Workgroup_Max_Dim_X",
    "Workgroup_Max_Dim_Y", "Workgroup_Max_Dim_Z", "Grid_Max_Dim_X", "Grid_Max_Dim_Y",
    "Grid_Max_Dim_Z", "Name", "Vendor_Name", "Product_Name", "Model_Name"]


def hex_address(address) -> str:
    """rocprofv3's address format: "0x" + 16 lower-case hex digits (as_hex(address, 16))."""
    return f"0x{(int(address or 0)) & _MASK64:016x}"


def _alloc_row(row, rocpd_form: bool = False):
    guid, kind, op, agent, size, address, corr, start, end = row
    named = op not in _NO_AGENT if rocpd_form else op in _AGENTS_WITH_ID
    return (guid, kind, op, agent if named and agent is not None else "", size,
            hex_address(address), corr, start, end)


def _extdata(text) -> dict:
    import json

    try:
        v = json.loads(text or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def agent_rows(db) -> list[list]:
    """agent_info.csv rows (the guid first) from rocpd_info_agent: the database's own indexes (absolute_index is the
    node id, logical_index the logical node id), the rest from the agent's extdata where present."""
    rows = []
    cores = {g: v for g, tag, v in db.metadata() if tag == "rocprof.cpu_cores"}
    for f in db.sources():
        for (guid, abs_i, log_i, typ, ext, name, vendor, product, model) in f.conn.execute(
                "SELECT guid, absolute_index, logical_index, type, extdata, name, vendor_name,"
                " product_name, model_name FROM rocpd_info_agent ORDER BY absolute_index, id"):
            info = _extdata(ext)
            typ = typ if typ in ("CPU", "GPU") else "UNK"
            if typ == "CPU" and "cpu_cores_count" not in info and str(cores.get(guid, "")).isdigit():
                info["cpu_cores_count"] = int(cores[guid])  # rocprof's writer: a metadata row
            vals = []
            for col in AGENT_INFO_HEADER[3:-4]:
                key = col.lower()
                if key.endswith(("_dim_x", "_dim_y", "_dim_z")):  # {"workgroup_max_dim": {"x":..}}
                    dims = info.get(key[:-2], {})
                    v = dims.get(key[-1], 0) if isinstance(dims, dict) else 0
                else:
                    v = info.get(key, 0)
                if isinstance(v, dict):  # e.g. {"x":..} dims or {"Value":..} versions
                    v = v.get("Value", 0)
                vals.append(v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0)
            rows.append([guid, int(abs_i or 0), int(log_i or 0), typ, *vals, name or "",
                         vendor or "", product or "", model or ""])
    rows.sort(key=lambda r: r[1])
    return rows


def write(db, path: str, stats: bool = True, guid: bool = False, agent_index: str = "relative",
          **filters) -> list[str]:
    """Write the CSV set with file-name prefix ``path`` (e.g. ``out/run`` -> ``out/run_kernel_trace.csv``).
    Only files with rows are written. Returns the paths written. A folder (an existing one, or
    a path ending in "/") gets files named as rocprofv3 names them with no -o:
    ``folder/results_kernel_trace.csv``; missing parent folders are created. ``guid``: the
    columns of ROCm's ``rocpd convert`` (see the module's doc). ``agent_index``: ROCm's
    --agent-index-value (rocpd.export.agent_sql; relative, "Agent 1", as rocprofv3's CSV).
    Memory stays bounded whatever the number of records: rows are read and written in chunks."""
    path = in_folder(path, "results")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    written: list[str] = []
    writers: dict[str, tuple] = {}
    files_open = contextlib.ExitStack()
    first = 0 if guid else 1  # every row starts with its guid
    by_name = bool(flt.include or flt.exclude)

    def out(stem: str, header: list[str], guid_column: bool = True):
        """(file, csv writer) of ``<path>_<stem>_trace.csv``, created with its header at its
        first row."""
        if stem not in writers:
            name = f"{path}_{stem}_trace.csv"
            fh = files_open.enter_context(open_output(name, newline=""))
            w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
            w.writerow(["Guid", *header] if guid and guid_column else header)
            writers[stem] = (fh, w)
            written.append(name)
        return writers[stem]

    with files_open:  # each file appears, whole, when all are written
        for f in iterate(db.sources(), "converting"):
            rows_bar = Rows(f.conn, f"converting {os.path.basename(f.path)}")
            sql = agent_sql(_KERNEL_SQL, agent_index).format(w=where)
            lines = _lines_sql(sql, _KERNEL_KINDS, first, extra=(8,) if by_name else ())
            for rows in _chunks(f.conn, lines, params):
                rows_bar.add(len(rows))
                if by_name:  # the kernel-name regexes, in the capture's dialect
                    import pandas as pd

                    keep = name_mask(pd.Series([r[1] for r in rows]), flt).tolist()
                    rows = [r for r, k in zip(rows, keep, strict=True) if k]
                if rows:
                    out("kernel", KERNEL_HEADER)[0].write("".join(r[0] for r in rows))
            sql = agent_sql(_COPY_SQL, agent_index).format(w=where)
            for rows in _chunks(f.conn, _lines_sql(sql, _COPY_KINDS, first), params):
                rows_bar.add(len(rows))
                out("memory_copy", COPY_HEADER)[0].write("".join(r[0] for r in rows))
            sql = agent_sql(_ALLOC_SQL, agent_index).format(w=where)
            for rows in _chunks(f.conn, sql, params):
                out("memory_allocation", ALLOC_HEADER)[1].writerows(
                    _alloc_row(row, guid)[first:] for row in rows)
            sql = agent_sql(_SCRATCH_SQL, agent_index).format(w=where)
            for rows in _chunks(f.conn, sql, params):  # SCRATCH_HEADER: never a Guid column
                out("scratch_memory", SCRATCH_HEADER, guid_column=False)[1].writerows(
                    _scratch_row(row) for row in rows)
            stems: dict[str, object] = {}  # category -> its file
            for rows in _chunks(f.conn, _lines_sql(_API_SQL.format(w=where), _API_KINDS,
                                                   first, extra=(1,)), [*params, *params]):
                rows_bar.add(len(rows))
                for line, category in rows:
                    fh = stems.get(category)
                    if fh is None:
                        fh = stems[category] = out(stem_for(category or "UNKNOWN_API"),
                                                   API_HEADER)[0]
                    fh.write(line)
            rows_bar.close()

    counters = write_counter_collection(db, path, guid=guid, **filters)
    if counters:
        written.append(counters)
    agents = agent_rows(db)
    if agents:
        name = f"{path}_agent_info.csv"
        with open_output(name, newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
            w.writerow(["Guid", *AGENT_INFO_HEADER] if guid else AGENT_INFO_HEADER)
            w.writerows(r[first:] for r in agents)
        written.append(name)
    if stats:
        written += write_stats_csv(db, path, **filters)
    return written
