"""What the timeline exporters (Chrome, Perfetto, OTF2) read the same way: the regions with their
display names, and the GPU work (kernels and copies) that passes the shared filters."""

from __future__ import annotations

from .. import _schema
from ..filters import Filter, name_mask

# A region's display name: a ROCTx range by its message (see rocpd._schema.region_name_sql).
REGION_NAME = _schema.region_name_sql()


def gpu_activity(conn, where: str, params: list, flt: Filter) -> list[tuple]:
    """(kind, guid, name, pid, agent, stream_id, stream, corr_id, start, end) of every kernel
    and copy in `where`, kind 'kernel' or 'copy', ordered by start. The kernel-name regexes of
    `flt` never drop copies."""
    rows = conn.execute(
        "SELECT 'kernel', guid, name, pid, agent_abs_index, stream_id, stream, corr_id, start,"
        f' "end" FROM kernels WHERE {where} UNION ALL'
        " SELECT 'copy', guid, name, pid, dst_agent_abs_index, stream_id, stream_name, corr_id,"
        f' start, "end" FROM memory_copies WHERE {where} ORDER BY start',
        [*params, *params]).fetchall()
    if flt.include or flt.exclude:
        import pandas as pd

        keep = name_mask(pd.Series([r[2] for r in rows]), flt).tolist()
        rows = [r for r, k in zip(rows, keep, strict=True) if k or r[0] == "copy"]
    return rows
