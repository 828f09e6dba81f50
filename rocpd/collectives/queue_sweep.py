"""Queue length per stream in bounded memory, for the report: each stream's joins (+1) and leaves
(-1) come from SQLite in time order (its sorter spills to disk, not to Python), and one sweep
keeps the level, the stream's summary row (rocpd.collectives.queue.stream_summary's numbers) and
every n-th instant for the chart, n set beforehand from the stream's count of instants so that
the series is the one the whole step function thinned to ``max_points`` gives. Memory: the
charted points, whatever the number of kernels."""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from .queue import _KERNELS_SQL

_K = ("WITH k(guid, pid, sid, t_in, t_out) AS (" + _KERNELS_SQL + "), e AS (SELECT guid, pid,"
      " sid, t_in AS t, 1 AS d FROM k UNION ALL SELECT guid, pid, sid, t_out, -1 FROM k) ")
_EVENTS = _K + "SELECT guid, pid, sid, t, d FROM e ORDER BY guid, pid, sid, t, d"
_COUNTS = _K + "SELECT guid, pid, sid, COUNT(DISTINCT t) FROM e GROUP BY guid, pid, sid"


def sweeps(db, max_points: int):
    """Per stream in (guid, pid, stream) order: (pid, stream_id, summary row as
    stream_summary gives it, thinned instants, their levels)."""
    counts: dict[tuple, int] = {}
    cursors = []
    for src in db.sources():
        counts.update(((g, p, s), n) for g, p, s, n in src.conn.execute(_COUNTS))
        cursors.append(src.conn.execute(_EVENTS))
    rows = cursors[0] if len(cursors) == 1 else heapq.merge(*cursors, key=lambda r: r[:3])
    for key, events in itertools.groupby(rows, key=lambda r: r[:3]):
        yield _sweep(key[1], key[2], events, max(1, counts[key] // max_points))


def _sweep(pid, sid, events, step: int):
    ts: list[int] = []
    lvs: list[int] = []
    i = level = weighted = empty = 0
    top = first = cur = prev_t = prev_lv = None

    def instant(t, lv):  # the queue's level after every event at instant t
        nonlocal i, weighted, empty, top, first, prev_t, prev_lv
        if i % step == 0:
            ts.append(t)
            lvs.append(lv)
        i += 1
        if prev_t is None:
            first = t
        else:
            weighted += prev_lv * (t - prev_t)
            if prev_lv == 0:
                empty += t - prev_t
        top = lv if top is None else max(top, lv)
        prev_t, prev_lv = t, lv

    for _g, _p, _s, t, d in events:  # leaves before joins at one instant
        if t != cur:
            if cur is not None:
                instant(cur, level)
            cur = t
        level += d
    instant(cur, level)
    span = int(prev_t - first) if i > 1 else 0
    # as numpy divides the int64 sums by the span
    mean = float(np.float64(weighted) / np.float64(span)) if span else float(top)
    share = float(np.float64(empty) / np.float64(span)) if span else 0.0
    row = {"pid": pid, "stream_id": sid, "kernels_max_queued": int(top), "mean_queued": mean,
           "empty_share": share, "span_ns": span}
    return pid, sid, row, np.array(ts, dtype=np.int64), np.array(lvs, dtype=np.int64)
