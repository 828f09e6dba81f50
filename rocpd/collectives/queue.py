"""Queue length per GPU stream over time, as HTA's queue-length analysis defines it: the number
of kernels launched on the stream and not yet finished. A kernel joins its stream's queue when
its launch call starts (the runtime/driver call with its correlation id, where API calls were
traced; else when the kernel starts, so the queue counts only running work) and leaves it when
the kernel ends. A stream whose queue stays near zero starves the GPU (launch-bound); a long
queue means the host runs ahead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# Each kernel's stream and when it joined and left the queue; its launch call's start is the
# first runtime/driver call with its correlation id, used only where it began before the kernel.
_KERNELS_SQL = ("SELECT K.guid, K.pid, K.stream_id, CASE WHEN R.start IS NOT NULL AND R.start <="
                " K.start THEN R.start ELSE K.start END, K.\"end\""
                " FROM kernels K LEFT JOIN (SELECT guid, corr_id, MIN(start) AS start FROM regions"
                " WHERE corr_id != 0 AND (category LIKE 'CUDA_%' OR category LIKE 'HIP_%')"
                " GROUP BY guid, corr_id) R ON R.guid = K.guid AND R.corr_id = K.corr_id"
                " WHERE K.guid IS NOT NULL AND K.pid IS NOT NULL AND K.stream_id IS NOT NULL")
_SLICE = 50_000
SUMMARY_COLUMNS = ["pid", "stream_id", "kernels_max_queued", "mean_queued", "empty_share", "span_ns"]


def _file_queue(src) -> tuple[list[str], np.ndarray]:
    """The file's kernels as an int64 array of rows (guid number, pid, stream, enter, end) and
    the guids the numbers stand for: 40 bytes a kernel, not a tuple of objects."""
    guids: dict[str, int] = {}
    chunks = []
    cur = src.conn.execute(_KERNELS_SQL)
    while rows := cur.fetchmany(_SLICE):
        g, pid, sid, enter, end = zip(*rows, strict=True)
        n = len(rows)
        chunks.append(np.stack([np.fromiter((guids.setdefault(x, len(guids)) for x in g),
                                            dtype=np.int64, count=n),
                                *(np.fromiter(c, dtype=np.int64, count=n)
                                  for c in (pid, sid, enter, end))], axis=1))
    rows = np.concatenate(chunks) if chunks else np.zeros((0, 5), dtype=np.int64)
    return list(guids), rows


def streams(db):
    """Per stream, in (guid, pid, stream) order: (guid, pid, stream_id, timestamps, levels), one
    entry per instant the queue changed (its level after the instant)."""
    files = db.map(_file_queue, label="queue length")
    keyed = []
    for fi, (guids, rows) in enumerate(files):
        if not len(rows):
            continue
        order = np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0]))
        rows = rows[order]
        cut = np.flatnonzero(np.any(rows[1:, :3] != rows[:-1, :3], axis=1)) + 1
        for lo, hi in zip(np.concatenate([[0], cut]), np.concatenate([cut, [len(rows)]]),
                          strict=True):
            g, pid, sid = rows[lo, :3]
            keyed.append(((guids[int(g)], int(pid), int(sid)), fi, lo, hi))
        files[fi] = (guids, rows)
    for (g, pid, sid), fi, lo, hi in sorted(keyed, key=lambda k: k[0]):
        grp = files[fi][1][lo:hi]
        t = np.concatenate([grp[:, 3], grp[:, 4]])
        d = np.concatenate([np.ones(len(grp), "int64"), -np.ones(len(grp), "int64")])
        order = np.lexsort((d, t))  # at one instant, leaving before joining
        t, level = t[order], np.cumsum(d[order])
        last = np.append(t[1:] != t[:-1], True)  # one row per instant: its final level
        yield g, pid, sid, t[last], level[last]


def queue_lengths(db):
    """DataFrame: pid, stream_id, timestamp, queue_length — one row per change, in time order
    per stream (a step function)."""
    cols = ["guid", "pid", "stream_id", "timestamp", "queue_length"]
    out = [pd.DataFrame({"guid": g, "pid": pid, "stream_id": sid, "timestamp": t,
                         "queue_length": level}) for g, pid, sid, t, level in streams(db)]
    if not out:
        return pd.DataFrame(columns=cols)
    return pd.concat(out, ignore_index=True)[cols]


def queue_summary(q):
    """Per stream: max and time-weighted mean queue length, and the share of the stream's active
    span with an empty queue (GPU idle on that stream)."""
    cols = SUMMARY_COLUMNS
    if q is None or q.empty:
        return pd.DataFrame(columns=cols)
    rows = [stream_summary(pid, sid, grp["timestamp"].to_numpy("int64"),
                           grp["queue_length"].to_numpy("int64"))
            for (_g, pid, sid), grp in q.groupby(["guid", "pid", "stream_id"], sort=True)]
    return pd.DataFrame(rows, columns=cols)


def stream_summary(pid, sid, t, lv) -> dict:
    """queue_summary's row of one stream from its timestamps and levels."""
    span = int(t[-1] - t[0]) if len(t) > 1 else 0
    dt = np.diff(t)
    mean = float((lv[:-1] * dt).sum() / span) if span else float(lv.max())
    empty = float(dt[lv[:-1] == 0].sum() / span) if span else 0.0
    return {"pid": pid, "stream_id": sid, "kernels_max_queued": int(lv.max()),
            "mean_queued": mean, "empty_share": empty, "span_ns": span}
