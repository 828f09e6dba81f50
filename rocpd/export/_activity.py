"""What the timeline exporters (Chrome, Perfetto, OTF2) read the same way: the regions with their
display names, and the GPU work (kernels and copies) that passes the shared filters."""

from __future__ import annotations

from .. import _schema
from ..filters import Filter, name_mask
from . import agent_column

# A region's display name: a ROCTx range by its message (see rocpd._schema.region_name_sql).
REGION_NAME = _schema.region_name_sql()


def gpu_activity(conn, where: str, params: list, flt: Filter, agent_index: str = "relative",
                 by_queue: bool = False) -> list[tuple]:
    """(kind, guid, name, pid, agent, stream_id, stream, corr_id, start, end) of every kernel
    and copy in `where`, kind 'kernel' or 'copy', ordered by start. The kernel-name regexes of
    `flt` never drop copies. ``agent``: the agent's number under ROCm's ``agent_index`` naming
    (rocpd.export.AGENT_INDEX); ``by_queue`` (ROCm's --group-by-queue): the queue (id, name) in
    place of the stream."""
    k_lane, c_lane = ("queue_id, queue", "queue_id, queue_name") if by_queue else \
        ("stream_id, stream", "stream_id, stream_name")
    rows = conn.execute(
        f"SELECT 'kernel', guid, name, pid, {agent_column(agent_index)}, {k_lane}, corr_id, start,"
        f' "end" FROM kernels WHERE {where} UNION ALL'
        f" SELECT 'copy', guid, name, pid, {agent_column(agent_index, 'dst_')}, {c_lane}, corr_id,"
        f' start, "end" FROM memory_copies WHERE {where} ORDER BY start',
        [*params, *params]).fetchall()
    if flt.include or flt.exclude:
        import pandas as pd

        keep = name_mask(pd.Series([r[2] for r in rows]), flt).tolist()
        rows = [r for r, k in zip(rows, keep, strict=True) if k or r[0] == "copy"]
    return rows
