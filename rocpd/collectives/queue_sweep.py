"""Queue length per stream in bounded memory: each stream's joins (+1) and leaves
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


def event_sweeps(db, max_points: int):
    """Per stream in (guid, pid, stream) order: (pid, stream_id, summary row as
    stream_summary gives it, thinned instants, their levels). Two sorts of every join and leave
    in SQLite and a count of distinct instants: rocpd.collectives.queue_stream's sweep is the
    cheaper one; this one takes any order of the rows (a kernel that ends before it starts)."""
    counts: dict[tuple, int] = {}
    cursors = []
    for src in db.sources():
        counts.update(((g, p, s), n) for g, p, s, n in src.conn.execute(_COUNTS))
        cursors.append(src.conn.execute(_EVENTS))
    rows = cursors[0] if len(cursors) == 1 else heapq.merge(*cursors, key=lambda r: r[:3])
    for key, events in itertools.groupby(rows, key=lambda r: r[:3]):
        yield _sweep(key[1], key[2], events, max(1, counts[key] // max_points))


_BATCH = 1 << 16  # events turned into arrays at a time


class _Level:
    """The sweep's state over the instants (distinct times) seen so far, fed in batches: the
    thinned points (or, before their number is known, every instant spilled), the
    time-weighted level, the time at level 0, the peak."""

    def __init__(self, step: int | None, spill=None):
        self.step, self.spill = step, spill  # step None: every instant into ``spill``
        self.i = self.weighted = self.empty = 0
        self.top = self.first = self.prev_t = self.prev_lv = None
        self.ts: list = []
        self.lvs: list = []

    def instants(self, t: np.ndarray, lv: np.ndarray) -> None:
        """The queue's level ``lv`` after every event at each instant ``t`` (ascending)."""
        if not len(t):
            return
        if self.step is None:
            self.spill.append(t, lv)
        else:
            keep = np.arange(self.i, self.i + len(t)) % self.step == 0
            self.ts.append(t[keep])
            self.lvs.append(lv[keep])
        self.i += len(t)
        if self.prev_t is None:  # the first instant: where the span begins
            self.first = int(t[0])
            before_t, before_lv, after_t = t[:-1], lv[:-1], t[1:]
        else:
            before_t = np.concatenate([[self.prev_t], t[:-1]])
            before_lv = np.concatenate([[self.prev_lv], lv[:-1]])
            after_t = t
        dt = after_t - before_t
        self.weighted += int((before_lv * dt).sum())
        self.empty += int(dt[before_lv == 0].sum())
        self.top = int(lv.max()) if self.top is None else max(self.top, int(lv.max()))
        self.prev_t, self.prev_lv = int(t[-1]), int(lv[-1])


def _sweep(pid, sid, events, step: int):
    """One stream's events (t, d: +1 join, -1 leave; by time, leaves first) a batch at a time:
    the level after each event by a running sum, an instant's level after its last event; the
    last instant of a batch waits for the next, which may hold more of its events."""
    state = _Level(step)
    level = 0
    carry = None  # (t, level) of the last instant read, maybe not complete
    while batch := list(itertools.islice(events, _BATCH)):
        cols = list(zip(*batch, strict=True))
        t = np.array(cols[3], dtype=np.int64)
        lv = level + np.cumsum(np.array(cols[4], dtype=np.int64))
        level = int(lv[-1])
        last = np.append(t[1:] != t[:-1], True)
        it, ilv = t[last], lv[last]
        if carry is not None and it[0] != carry[0]:
            state.instants(np.array([carry[0]]), np.array([carry[1]]))
        state.instants(it[:-1], ilv[:-1])
        carry = (int(it[-1]), int(ilv[-1]))
    state.instants(np.array([carry[0]]), np.array([carry[1]]))
    return (pid, sid, summary_row(pid, sid, state), np.concatenate(state.ts).astype(np.int64),
            np.concatenate(state.lvs).astype(np.int64))


def summary_row(pid, sid, state: _Level) -> dict:
    """stream_summary's row from a finished sweep's sums."""
    i, first, prev_t, top = state.i, state.first, state.prev_t, state.top
    weighted, empty = state.weighted, state.empty
    span = int(prev_t - first) if i > 1 else 0
    # as numpy divides the int64 sums by the span
    mean = float(np.float64(weighted) / np.float64(span)) if span else float(top)
    share = float(np.float64(empty) / np.float64(span)) if span else 0.0
    return {"pid": pid, "stream_id": sid, "kernels_max_queued": int(top), "mean_queued": mean,
            "empty_share": share, "span_ns": span}
