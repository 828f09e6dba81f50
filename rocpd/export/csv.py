"""rocprofv3's CSV set: ``<prefix>_kernel_trace.csv``, ``<prefix>_<api>_api_trace.csv``,
``<prefix>_memory_copy_trace.csv``, ``<prefix>_memory_allocation_trace.csv`` and the stats files.
Strings are quoted, numbers are not, as rocprofv3 writes them."""

from __future__ import annotations

import csv
import os

from .. import _schema
from ..filters import Filter, name_mask, resolve
from ..progress import iterate
from ..stats import stem_for, write_stats_csv

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

_KERNEL_SQL = ("SELECT 'KERNEL_DISPATCH', agent_abs_index, queue_id, stream_id, tid, dispatch_id,"
               " kernel_id, name, corr_id, start, \"end\", lds_size, scratch_size, vgpr_count,"
               " accum_vgpr_count, sgpr_count, workgroup_x, workgroup_y, workgroup_z, grid_x, grid_y,"
               " grid_z FROM kernels WHERE {w} ORDER BY start")
_API_SQL = (f"SELECT category, {_schema.region_name_sql()}, pid, tid, corr_id, start, \"end\""
            " FROM regions WHERE {w} ORDER BY start")
_COPY_SQL = ("SELECT 'MEMORY_COPY', name, stream_id, src_agent_abs_index, dst_agent_abs_index, corr_id,"
             " start, \"end\" FROM memory_copies WHERE {w} ORDER BY start")
_ALLOC_SQL = ("SELECT 'MEMORY_ALLOCATION', 'MEMORY_ALLOCATION_' || COALESCE(type, 'UNKNOWN'),"
              " agent_abs_index, size, printf('0x%x', address), corr_id, start, \"end\""
              " FROM memory_allocations WHERE {w} ORDER BY start")


def write(db, path: str, stats: bool = True, **filters) -> list[str]:
    """Write the CSV set with file-name prefix ``path`` (e.g. ``out/run`` -> ``out/run_kernel_trace.csv``).
    Only files with rows are written. Returns the paths written. A folder (an existing one, or
    a path ending in "/") gets files named as rocprofv3 names them with no -o:
    ``folder/results_kernel_trace.csv``; missing parent folders are created."""
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
            rows = f.conn.execute(_KERNEL_SQL.format(w=where), params).fetchall()
            if rows and (flt.include or flt.exclude):
                import pandas as pd

                keep = name_mask(pd.Series([r[7] for r in rows]), flt).tolist()
                rows = [r for r, k in zip(rows, keep, strict=True) if k]
            if rows:
                out("kernel", KERNEL_HEADER).writerows(rows)
            for sql, stem, header in ((_COPY_SQL, "memory_copy", COPY_HEADER),
                                      (_ALLOC_SQL, "memory_allocation", ALLOC_HEADER)):
                for row in f.conn.execute(sql.format(w=where), params):
                    out(stem, header).writerow(row)
            for row in f.conn.execute(_API_SQL.format(w=where), params):
                out(stem_for(row[0] or "UNKNOWN_API"), API_HEADER).writerow(row)
    finally:
        for fh, _ in writers.values():
            fh.close()
    if stats:
        written += write_stats_csv(db, path, **filters)
    return written
