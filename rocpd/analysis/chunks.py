"""A process's GPU work read again on demand, in time order, a chunk of rows at a time: what the
streamed analysis (rocpd.analysis.streamed) sweeps instead of holding one frame row per op.

Kernels come from SQLite in (start, id) order, which the writer's index on ``start`` gives
without a sort; copies and sets (far fewer) are held whole, as ``p.gpu``, and merged in. Each
chunk is the frame activity.load would have made of those rows, column for column: prepared
(kind, direction, memory kinds, sites, duration) and joined to its launch calls. Concatenated,
the chunks are the in-memory ``p.gpu`` row for row, in its order: ops sorted by start, kernels
before copies at one start (the in-memory frame is kernels then copies, stably sorted).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.filters import name_mask
from .activity import _prepare_gpu, join_launches
from .gpuload import COLUMNS, _column, _names, same

CHUNK = 200_000  # kernels per chunk: ~60 MB of frame while it is swept

_KERNELS = """
SELECT pid, tid, agent, stream, start, "end", name_id, corr, line_info FROM (
  SELECT K.id, K.guid, K.pid, K.tid, K.agent_id AS agent, K.stream_id AS stream, K.start, K."end",
         K.kernel_id AS name_id, E.stack_id AS corr, NULLIF({line_info}, '{{}}') AS line_info
  FROM rocpd_kernel_dispatch K
  LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
) WHERE ({where}) AND guid = ? ORDER BY start, id
"""
_KCOLS = ["pid", "tid", "agent", "stream", "start", "end", "name_id", "corr", "line_info"]


def stored_kernels(conn, guid: str) -> int:
    """Kernel rows of part ``guid`` before any filter: what decides whether it is streamed."""
    return int(conn.execute("SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE guid = ?",
                            (guid,)).fetchone()[0])


class GpuStream:
    """The GPU ops of one database part under the analysis's filter, as prepared frames."""

    def __init__(self, conn, where: str, params: list, guid: str, line_info: str, flt, comm_re):
        self.conn, self.where, self.params, self.guid = conn, where, params, guid
        self.line_info, self.flt, self.comm_re = line_info, flt, comm_re
        self.copies = None  # the prepared, joined copies (p.gpu), set by the loader
        self.index = None  # activity.launch_index of the process's API calls

    def _kernel_frames(self, chunk: int):
        cur = self.conn.execute(_KERNELS.format(where=self.where, line_info=self.line_info),
                                [*self.params, self.guid])
        while rows := cur.fetchmany(chunk):
            cols = list(zip(*rows, strict=True))
            del rows
            data = {}
            for name, values in zip(_KCOLS, cols, strict=True):
                if name != "name_id":
                    data[name] = _column([_ints(values)])
            n = len(cols[0])
            ids = _ints(cols[_KCOLS.index("name_id")])
            data["name"] = pd.Series(_names(self.conn, self.guid, ids), dtype=object)
            data["guid"] = pd.Series(same(n, self.guid), dtype=object)
            data["op"] = pd.Series(same(n, "kernel"), dtype=object)
            for c in ("bytes", "extdata", "src_agent", "dst_agent"):
                data[c] = pd.Series(same(n, None), dtype=object)
            del cols
            k = pd.DataFrame(data, columns=COLUMNS, copy=False)
            if self.flt is not None and (self.flt.include or self.flt.exclude):
                k = k[name_mask(k["name"], self.flt).to_numpy()].reset_index(drop=True)
            yield k

    def frames(self, chunk: int = CHUNK):
        """Prepared frames of at most ``chunk`` kernels (and the copies among them) in order."""
        copies = self.copies if self.copies is not None else pd.DataFrame()
        c_start = copies["start"].to_numpy() if len(copies) else np.zeros(0, dtype=np.int64)
        ci = 0
        for k in self._kernel_frames(chunk):
            if k.empty:
                continue
            k = _prepare_gpu(k, self.comm_re)
            join_launches(k, self.index)
            # Copies before the chunk's last start; one at that start waits for the next chunk,
            # whose kernels at that start come first.
            cj = int(np.searchsorted(c_start, int(k["start"].iloc[-1]), side="left"))
            yield _merged(k, copies.iloc[ci:cj]) if cj > ci else k
            ci = cj
        if ci < len(copies):
            yield copies.iloc[ci:].reset_index(drop=True)


def _ints(values):
    """An int64 array where every value is an int (numpy finds out in one pass), else the list:
    the whole-frame reader's test, at a fraction of a Python check per cell."""
    arr = np.array(values)
    return arr if arr.dtype == np.int64 and len(values) else list(values)


def _merged(k, c):
    """Kernels ``k`` and copies ``c`` (each sorted by start) as one frame sorted by start,
    kernels first at one start."""
    both = pd.concat([k, c.reindex(columns=k.columns)], ignore_index=True)
    order = np.argsort(both["start"].to_numpy(), kind="stable")
    return both.take(order).reset_index(drop=True)
