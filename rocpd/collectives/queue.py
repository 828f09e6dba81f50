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

_KERNELS_SQL = ("SELECT K.guid, K.pid, K.stream_id, K.start, K.\"end\", K.corr_id, R.start"
                " FROM kernels K LEFT JOIN (SELECT guid, corr_id, MIN(start) AS start FROM regions"
                " WHERE corr_id != 0 AND (category LIKE 'CUDA_%' OR category LIKE 'HIP_%')"
                " GROUP BY guid, corr_id) R ON R.guid = K.guid AND R.corr_id = K.corr_id")


def _file_queue(src) -> list[tuple]:
    return [tuple(r) for r in src.conn.execute(_KERNELS_SQL)]


def queue_lengths(db):
    """DataFrame: pid, stream_id, timestamp, queue_length — one row per change, in time order
    per stream (a step function)."""
    rows = [r for found in db.map(_file_queue, label="queue length") for r in found]
    cols = ["guid", "pid", "stream_id", "timestamp", "queue_length"]
    if not rows:
        return pd.DataFrame(columns=cols)
    k = pd.DataFrame(rows, columns=["guid", "pid", "stream_id", "start", "end", "corr", "launch"])
    k["enter"] = k["launch"].where(k["launch"].notna() & (k["launch"] <= k["start"]), k["start"])
    out = []
    for (g, pid, sid), grp in k.groupby(["guid", "pid", "stream_id"], sort=True):
        t = np.concatenate([grp["enter"].to_numpy("int64"), grp["end"].to_numpy("int64")])
        d = np.concatenate([np.ones(len(grp), "int64"), -np.ones(len(grp), "int64")])
        order = np.lexsort((d, t))  # at one instant, leaving before joining
        t, level = t[order], np.cumsum(d[order])
        last = np.append(t[1:] != t[:-1], True)  # one row per instant: its final level
        out.append(pd.DataFrame({"guid": g, "pid": pid, "stream_id": sid, "timestamp": t[last],
                                 "queue_length": level[last]}))
    return pd.concat(out, ignore_index=True)[cols]


def queue_summary(q):
    """Per stream: max and time-weighted mean queue length, and the share of the stream's active
    span with an empty queue (GPU idle on that stream)."""
    cols = ["pid", "stream_id", "kernels_max_queued", "mean_queued", "empty_share", "span_ns"]
    if q is None or q.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for (_g, pid, sid), grp in q.groupby(["guid", "pid", "stream_id"], sort=True):
        t = grp["timestamp"].to_numpy("int64")
        lv = grp["queue_length"].to_numpy("int64")
        span = int(t[-1] - t[0]) if len(t) > 1 else 0
        dt = np.diff(t)
        mean = float((lv[:-1] * dt).sum() / span) if span else float(lv.max())
        empty = float(dt[lv[:-1] == 0].sum() / span) if span else 0.0
        rows.append({"pid": pid, "stream_id": sid, "kernels_max_queued": int(lv.max()),
                     "mean_queued": mean, "empty_share": empty, "span_ns": span})
    return pd.DataFrame(rows, columns=cols)
