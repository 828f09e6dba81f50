"""The processes `rocpd memory` needs for its steps, read lightly: each process's ROCTx ranges and
the start times of its GPU work (one integer per kernel or copy, read through a cursor), not the
analysis' tables of every kernel with its name, line and launch (rocpd.analysis.activity). The
step range is then chosen as the analysis chooses it (rocpd.analysis.steps), with one difference:
a kernel counts as inside a step by its start on the GPU rather than by its launch call's start
(the launch is not read here); the report and `rocpd diff` hand their analysis' own steps in."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import _schema
from ..analysis.activity import Process, _prepare_ranges
from ..io.filters import Filter, rank_of, resolve

_RANGES_SQL = """
SELECT * FROM (
  SELECT R.guid, R.pid, R.tid, R.start, R."end", {name} AS name
  FROM rocpd_region R
  LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid
  LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid
  LEFT JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid
  WHERE R.guid = ? AND C.string LIKE 'MARKER%' AND R."end" > R.start
) WHERE {where}
"""
_GPU_SQL = """
SELECT start FROM (
  SELECT guid, pid, start, "end" FROM rocpd_kernel_dispatch WHERE guid = ?
  UNION ALL SELECT guid, pid, start, "end" FROM rocpd_memory_copy WHERE guid = ?
) WHERE start IS NOT NULL AND {where}
"""


def processes(db, **filters) -> list[Process]:
    """A Process per database part with its ranges and its GPU work's start times only."""
    where, params = resolve(db, Filter.of(filters))
    ranks = rank_of(db)
    name = _schema.region_name_sql("C.string", "E.extdata", "S.string")
    out = []
    for src in db.sources():
        pids = dict(src.conn.execute("SELECT guid, pid FROM rocpd_info_process"))
        for part in src.parts:
            g = part.guid
            cur = src.conn.execute(_RANGES_SQL.format(name=name, where=where), [g, *params])
            ranges = pd.DataFrame.from_records(cur.fetchall(),
                                               columns=[d[0] for d in cur.description])
            cur = src.conn.execute(_GPU_SQL.format(where=where), [g, g, *params])
            starts = np.fromiter((t for (t,) in cur), dtype=np.int64)
            out.append(Process(
                guid=g, pid=int(pids.get(g) or 0), rank=ranks.get(g), host="", command="",
                gpu=pd.DataFrame({"launch_start": starts, "start": starts}), api=pd.DataFrame(),
                ranges=_prepare_ranges(ranges)))
    return out
