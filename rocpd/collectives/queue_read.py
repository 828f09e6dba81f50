"""The kernels the queue-length sweep reads, as int64 arrays a batch at a time: each kernel's
stream (pid, stream id), when it joined its stream's queue and when it left
(rocpd.collectives.queue's definitions), every stream's kernels in order of joining.

Where no launch call of the part carries a correlation id, a kernel joins when it starts. The
rows as stored usually hold each stream's kernels in that order already (a stream runs its
kernels one after another, and the writer stores them as they end): read first by rowid ranges,
a plain scan, half the time of the index (measured at 10M kernels: 4.3 s against 9.3 s). Where
a stream's rows are not in order the sweep says so (queue_stream._Disorder) and reads again
through the writer's index on ``start``, which gives the kernels in order without a sort. Each
batch is one row of SQLite's making, a column as one ``group_concat`` text that numpy parses
(as rocpd.analysis.chunks reads the analysis's kernels). Otherwise one query sorts the kernels
by (stream, joining time): one sort of N rows, where the event sweep it replaces sorted 2N
twice.
"""

from __future__ import annotations

import numpy as np

from ..summary.fastagg import _Unreadable, rowid_ranges, rowid_span
from .queue import _KERNELS_SQL

BATCH = 1 << 16  # kernels a batch: a few MB of arrays (or of rows, where they are sorted)
_FIRST = -(1 << 62)

_LAUNCHES = ("SELECT 1 FROM regions WHERE guid = ? AND corr_id != 0 AND (category LIKE 'CUDA_%'"
             " OR category LIKE 'HIP_%') LIMIT 1")
_BY_START = ("SELECT COUNT(*), group_concat(pid), group_concat(stream_id), group_concat(start),"
             " group_concat(\"end\"), group_concat(id) FROM (SELECT id, pid, stream_id, start,"
             " \"end\" FROM {table} WHERE guid = ? AND start >= ? AND (start > ? OR id > ?)"
             " AND pid IS NOT NULL AND stream_id IS NOT NULL AND \"end\" IS NOT NULL"
             " ORDER BY start, id LIMIT {n})")
_BY_ROWID = ("SELECT COUNT(*), group_concat(pid), group_concat(stream_id), group_concat(start),"
             " group_concat(\"end\") FROM {table} WHERE id >= ? AND id < ? AND guid = ?"
             " AND pid IS NOT NULL AND stream_id IS NOT NULL AND \"end\" IS NOT NULL")
_SORTED = ("WITH k(guid, pid, sid, t_in, t_out) AS (" + _KERNELS_SQL + ") SELECT pid, sid, t_in,"
           " t_out FROM k WHERE guid = ? ORDER BY pid, sid, t_in")


def batches(src, part, batch: int = BATCH, stored: set | None = None):
    """(pid, stream, join, leave) int64 arrays of ``part``'s kernels, ``batch`` at a time; per
    stream in order of joining (streams interleave in a batch). ``stored``: where given, a part
    whose kernels join when they start is read in the order stored (by rowid), and its guid
    added to the set; the caller checks the order."""
    table = src.table(part, "kernel_dispatch")
    if table is None:
        return
    if src.conn.execute(_LAUNCHES, (part.guid,)).fetchone() is None:
        if stored is not None:
            # Ids far sparser than rows (too many ranges), or views narrowed to a time window:
            # through the index, as before.
            try:
                lo, hi = rowid_span(src.conn, table)
                ranges = rowid_ranges(lo, hi, batch) if lo is not None else []
            except _Unreadable:
                ranges = None
            if ranges == []:
                return
            if ranges is not None:
                stored.add(part.guid)
                yield from _by_rowid(src, part, table, ranges)
                return
        sql = _BY_START.format(table=table, n=batch)
        plan = " ".join(r[-1] for r in src.conn.execute("EXPLAIN QUERY PLAN " + sql,
                                                        (part.guid, _FIRST, _FIRST, _FIRST)))
        if "(start>?)" in plan:
            yield from _by_start(src, part, sql)
            return
    yield from _sorted(src, part, batch)


def _pids(src, part) -> dict:
    """The kernels view's pid (the process table's, else the row's) for each stored pid."""
    info = src.table(part, "info_process")
    if info is None:
        return {}
    return {i: p for i, p in src.conn.execute(f"SELECT id, pid FROM {info} WHERE guid = ?",
                                              (part.guid,)) if p is not None}


def _by_rowid(src, part, table: str, ranges: list):
    pids = _pids(src, part)
    sql = _BY_ROWID.format(table=table)
    for a, b in ranges:
        row = src.conn.execute(sql, (a, b, part.guid)).fetchone()
        n = row[0]
        if not n:
            continue
        pid, sid, start, end = _parsed(row[1:], n)
        yield _named(pid, pids), sid, start, end


def _parsed(texts, n: int) -> list:
    """The columns of one batch from their group_concat texts."""
    cols = [np.fromstring(text, dtype=np.int64, sep=",") for text in texts]
    if any(len(c) != n for c in cols):
        raise ValueError("a kernel row that is not integers where the schema has them")
    return cols


def _named(pid, pids: dict):
    """Stored pids as the kernels view names them (rocpd_info_process's pid where it has one)."""
    if not pids:
        return pid
    u, inv = np.unique(pid, return_inverse=True)
    return np.array([pids.get(int(x), int(x)) for x in u], dtype=np.int64)[inv]


def _by_start(src, part, sql):
    pids = _pids(src, part)
    last = (_FIRST, _FIRST)
    while True:
        row = src.conn.execute(sql, (part.guid, last[0], last[0], last[1])).fetchone()
        n = row[0]
        if not n:
            return
        pid, sid, start, end, ids = _parsed(row[1:], n)
        order = np.lexsort((ids, start))
        if (order[1:] < order[:-1]).any():  # as the index gives them, else put in that order
            pid, sid, start, end, ids = (c[order] for c in (pid, sid, start, end, ids))
        last = (int(start[-1]), int(ids[-1]))
        yield _named(pid, pids), sid, start, end


def _sorted(src, part, batch: int):
    cur = src.conn.execute(_SORTED, (part.guid,))
    while rows := cur.fetchmany(batch):
        cols = list(zip(*rows, strict=True))
        del rows
        yield tuple(np.array(c, dtype=np.int64) for c in cols)
