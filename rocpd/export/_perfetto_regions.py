"""The regions of a Perfetto trace (API calls, ROCTx ranges: slices on their threads' tracks)
streamed as its kernels are (rocpd.export._perfetto_gpu, whose two passes, lanes and spill this
uses): read by start from the index on start, a track's slices at one start swept longer first,
ties by id, which is the held writer's order where its query scans the table (no time filter).
The thread tracks are made first, in the order the held writer meets them (its scan: by id).
Whether an API call starts a flow depends on the kernels read after it: each begin keeps "may",
and the writer gives the set of stack ids that both ends have before the second pass.
"""

from __future__ import annotations

import numpy as np

from . import _activity as act
from ._perfetto_gpu import _FIRST, CHUNK, GpuStream, Held, pages

_REGIONS = """
SELECT COUNT(*), group_concat(id), group_concat(pid), group_concat(tid), group_concat(stack),
       group_concat(start), group_concat("end"), group_concat(name, char(0)),
       group_concat(cat, char(0)) FROM (
  SELECT id, pid, tid, COALESCE(stack_id, 0) AS stack, start, "end",
         COALESCE({name}, '') AS name, COALESCE(category, '') AS cat
  FROM regions WHERE ({where}) AND guid = ? AND start >= ? AND (start > ? OR id > ?)
  ORDER BY start, id LIMIT {n}
)
"""
_INTS = ["id", "pid", "tid", "stack", "start", "end"]
# Regions of a file past which they are streamed: fewer are held (their arrays are smaller than
# a streamed chunk's, and a small trace's peak stays small).
STREAM_ABOVE = 50_000


def open_regions(src, where: str, params: list, files: int = 1):
    """A :class:`RegionStream` of file ``src``'s regions, or None where they are to be held."""
    if len(src.parts) != 1:
        return None
    conn, guid = src.conn, src.parts[0].guid
    if conn.execute("SELECT COUNT(*) FROM rocpd_region WHERE guid = ?",
                    (guid,)).fetchone()[0] <= STREAM_ABOVE:
        return None
    held = (f'SELECT guid, category, {act.REGION_NAME}, pid, tid, stack_id, start, "end"'
            f" FROM regions WHERE {where}")
    plan = [r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + held, params)]
    if not any(p.startswith("SCAN ") and "rocpd_region" in p and "INDEX" not in p for p in plan):
        return None  # not a scan in id order (a time filter reads by start)
    sql = _REGIONS.format(name=act.REGION_NAME, where=where, n=max(1, CHUNK // max(files, 1)))
    plan = " ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql,
                                                [*params, guid, _FIRST, _FIRST, _FIRST]))
    if "(start>?)" not in plan:
        return None
    return RegionStream(conn, guid, sql, params, where)


class RegionStream(GpuStream):
    what = "regions"

    def __init__(self, conn, guid, sql, params, where):
        self.conn, self.guid, self.sql, self.params, self.where = conn, guid, sql, params, where
        self.uuid, self.rank, self.overlap = {}, {}, {}
        self.count = self.chunks = 0
        self.out_stacks = np.zeros(0, dtype=np.int64)
        self.both = np.zeros(0, dtype=np.int64)  # stack ids with both ends, set by the writer
        self.codes: dict = {}  # text -> code
        self.label_code: dict = {}

    def _total(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM rocpd_region WHERE guid = ?",
                                     (self.guid,)).fetchone()[0])

    def first_pass(self, thread, per_track, text) -> None:
        """The thread tracks in the order the held writer meets them, then GpuStream's pass."""
        rows = self.conn.execute(
            f"SELECT pid, tid, MIN(id) FROM regions WHERE ({self.where}) AND guid = ?"
            " GROUP BY pid, tid ORDER BY 3", [*self.params, self.guid]).fetchall()
        if any(p is None or t is None for p, t, _ in rows):
            raise Held
        for pid, tid, _ in rows:
            self._track((pid, tid, 0), thread(self.guid, pid, tid), per_track)
        super().first_pass(None, None, per_track, text, ())

    def _code(self, text, s: str) -> int:
        c = self.codes.get(s)
        if c is None:
            c = self.codes[s] = text.code(s)
        return c

    def _ops(self, text):
        for n, cols, (names, cats) in pages(self.conn, self.sql, self.params, self.guid, _INTS):
            names, cats = names.split("\x00"), cats.split("\x00")
            if len(names) != n or len(cats) != n:
                raise Held  # a name holding the separator
            yield {"pid": cols["pid"], "label": cols["tid"],
                   "stream_id": np.zeros(n, dtype=np.int64), "stack": cols["stack"],
                   "start": cols["start"], "end": cols["end"],
                   "name": np.array([self._code(text, x) for x in names], dtype=np.int64),
                   "cat": np.array([self._code(text, x) for x in cats], dtype=np.int64),
                   "may": np.array([not x.startswith("MARKER") for x in cats], dtype=np.int64)}

    def _flows(self, may, stack):
        """An API call starts a flow (_OUT) where a kernel or copy ends it."""
        return (may * np.isin(stack, self.both)).astype(np.int64)
