"""rocprofv3's CSV set: ``<prefix>_kernel_trace.csv``, ``<prefix>_<api>_api_trace.csv``,
``<prefix>_memory_copy_trace.csv``, ``<prefix>_memory_allocation_trace.csv``,
``<prefix>_agent_info.csv``, ``<prefix>_counter_collection.csv`` (:mod:`rocpd.pmc`) and the stats
files.
Strings are quoted, numbers are not, as rocprofv3 writes them."""

from __future__ import annotations

import csv
import os

from .. import _schema
from ..filters import Filter, name_mask, resolve
from ..progress import iterate
from ..stats import stem_for, write_stats_csv
from . import agent_sql

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

# Value formats follow ROCm's rocprofiler-sdk (rocm-systems), source/lib/output/generateCSV.cpp and
# metadata.cpp (create_agent_index): agents are "Agent <logical index>" (rocprofv3's default
# --agent-index relative, output_config.cpp), addresses "0x" + 16 hex digits, operation
# MEMORY_ALLOCATION_ALLOCATE (stored type ALLOC, as ROCm's rocpd csv.cpp maps it), no agent on frees.
_AGENT = "'Agent ' || {c}"
_KERNEL_SQL = ("SELECT 'KERNEL_DISPATCH', " + _AGENT.format(c="agent_log_index") + ", queue_id, stream_id, tid, dispatch_id,"
               " kernel_id, name, corr_id, start, \"end\", lds_size, scratch_size, vgpr_count,"
               " accum_vgpr_count, sgpr_count, workgroup_x, workgroup_y, workgroup_z, grid_x, grid_y,"
               " grid_z FROM kernels WHERE {w} ORDER BY start")
_API_SQL = (f"SELECT category, {_schema.region_name_sql()}, pid, tid, corr_id, start, \"end\""
            " FROM regions WHERE {w} ORDER BY start")
_COPY_SQL = ("SELECT 'MEMORY_COPY', name, stream_id, " + _AGENT.format(c="src_agent_log_index") + ", "
             + _AGENT.format(c="dst_agent_log_index") + ", corr_id,"
             " start, \"end\" FROM memory_copies WHERE {w} ORDER BY start")
_ALLOC_SQL = ("SELECT 'MEMORY_ALLOCATION', 'MEMORY_ALLOCATION_' || CASE COALESCE(type, 'UNKNOWN')"
              " WHEN 'ALLOC' THEN 'ALLOCATE' ELSE COALESCE(type, 'UNKNOWN') END,"
              " " + _AGENT.format(c="agent_log_index") + ", size, address, corr_id, start, \"end\""
              " FROM memory_allocations WHERE {w} ORDER BY start")


_AGENTS_WITH_ID = ("MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_VMEM_ALLOCATE")
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


def _alloc_row(row):
    kind, op, agent, size, address, corr, start, end = row
    return (kind, op, agent if op in _AGENTS_WITH_ID else "", size, hex_address(address), corr,
            start, end)


def _extdata(text) -> dict:
    import json

    try:
        v = json.loads(text or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def agent_rows(db) -> list[list]:
    """agent_info.csv rows from rocpd_info_agent: the database's own indexes (absolute_index is the
    node id, logical_index the logical node id), the rest from the agent's extdata where present."""
    rows = []
    for f in db.sources():
        for (abs_i, log_i, typ, ext, name, vendor, product, model) in f.conn.execute(
                "SELECT absolute_index, logical_index, type, extdata, name, vendor_name, product_name,"
                " model_name FROM rocpd_info_agent ORDER BY absolute_index, id"):
            info = _extdata(ext)
            typ = typ if typ in ("CPU", "GPU") else "UNK"
            vals = []
            for col in AGENT_INFO_HEADER[3:-4]:
                v = info.get(col.lower(), 0)
                if isinstance(v, dict):  # e.g. {"x":..} dims or {"Value":..} versions
                    v = v.get("Value", 0)
                vals.append(v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0)
            rows.append([int(abs_i or 0), int(log_i or 0), typ, *vals, name or "", vendor or "",
                         product or "", model or ""])
    rows.sort(key=lambda r: r[0])
    return rows


def write(db, path: str, stats: bool = True, agent_index: str = "relative",
          **filters) -> list[str]:
    """Write the CSV set with file-name prefix ``path`` (e.g. ``out/run`` -> ``out/run_kernel_trace.csv``).
    Only files with rows are written. Returns the paths written. A folder (an existing one, or
    a path ending in "/") gets files named as rocprofv3 names them with no -o:
    ``folder/results_kernel_trace.csv``; missing parent folders are created. ``agent_index``:
    ROCm's --agent-index-value (rocpd.export.agent_sql)."""
    if path.endswith(os.sep) or os.path.isdir(path):
        path = os.path.join(path, "results")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    files = db.sources()
    written: list[str] = []
    writers: dict[str, tuple] = {}

    def out(stem: str, header: list[str]):
        if stem not in writers:
            name = f"{path}_{stem}_trace.csv"
            fh = open(name, "w", newline="")
            w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
            w.writerow(header)
            writers[stem] = (fh, w)
            written.append(name)
        return writers[stem][1]

    try:
        for f in iterate(files, "converting"):
            rows = f.conn.execute(agent_sql(_KERNEL_SQL, agent_index).format(w=where),
                                  params).fetchall()
            if rows and (flt.include or flt.exclude):
                import pandas as pd

                keep = name_mask(pd.Series([r[7] for r in rows]), flt).tolist()
                rows = [r for r, k in zip(rows, keep, strict=True) if k]
            if rows:
                out("kernel", KERNEL_HEADER).writerows(rows)
            for sql, stem, header in ((_COPY_SQL, "memory_copy", COPY_HEADER),
                                      (_ALLOC_SQL, "memory_allocation", ALLOC_HEADER)):
                for row in f.conn.execute(agent_sql(sql, agent_index).format(w=where), params):
                    out(stem, header).writerow(_alloc_row(row) if stem == "memory_allocation" else row)
            # rocprofv3 gives every record its own internal correlation id; our capture stores 0 for
            # ROCTx ranges, so those get fresh ids above the file's largest one (unique, non-zero).
            next_corr = _max_correlation(f.conn) + 1
            for row in f.conn.execute(_API_SQL.format(w=where), params):
                if not row[4]:
                    row = (*row[:4], next_corr, *row[5:])
                    next_corr += 1
                out(stem_for(row[0] or "UNKNOWN_API"), API_HEADER).writerow(row)
    finally:
        for fh, _ in writers.values():
            fh.close()
    from ..pmc import write_counter_collection

    counters = write_counter_collection(db, path, **filters)
    if counters:
        written.append(counters)
    agents = agent_rows(db)
    if agents:
        name = f"{path}_agent_info.csv"
        with open(name, "w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
            w.writerow(AGENT_INFO_HEADER)
            w.writerows(agents)
        written.append(name)
    if stats:
        written += write_stats_csv(db, path, **filters)
    return written


def _max_correlation(conn) -> int:
    best = 0
    for view in ("regions", "kernels", "memory_copies", "memory_allocations"):
        best = max(best, conn.execute(f"SELECT COALESCE(MAX(corr_id), 0) FROM {view}").fetchone()[0] or 0)
    return int(best)
