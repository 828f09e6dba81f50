"""Counter tracks for the timeline, read generically from rocpd_pmc_event/rocpd_info_pmc: each
value is placed at its event's time — a sample's timestamp (device metrics sampled over time), a
kernel dispatch's start (per-kernel counters, as rocprofv3 collects them) or a region's start.
One track per process, counter and agent; long series are thinned to at most ``MAX_POINTS``
(the min and max of each bucket kept, so peaks survive)."""

from __future__ import annotations

import numpy as np
import pandas as pd

MAX_POINTS = 4000

_SQL = """
SELECT PE.guid, I.name, COALESCE(I.units, ''), I.agent_id, PE.value,
       COALESCE(SA.timestamp, K.start, R.start) AS t
FROM rocpd_pmc_event PE
JOIN rocpd_info_pmc I ON I.id = PE.pmc_id AND I.guid = PE.guid
LEFT JOIN rocpd_sample SA ON SA.event_id = PE.event_id AND SA.guid = PE.guid
LEFT JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid
LEFT JOIN rocpd_region R ON R.event_id = PE.event_id AND R.guid = PE.guid
WHERE PE.value IS NOT NULL
"""


def counter_frame(db):
    """(guid, name, units, agent_id, value, t) of every counter value with a time, all files."""
    rows = []
    for src in db.sources():
        if not src.conn.execute("SELECT 1 FROM rocpd_pmc_event LIMIT 1").fetchone():
            continue
        rows += src.conn.execute(_SQL).fetchall()
    df = pd.DataFrame(rows, columns=["guid", "name", "units", "agent_id", "value", "t"])
    return df[df["t"].notna()].sort_values("t", kind="stable", ignore_index=True)


def _thin(t: np.ndarray, v: np.ndarray, n: int = MAX_POINTS):
    if t.size <= n:
        return t, v
    buckets = np.linspace(t[0], t[-1], n // 2 + 1)
    b = np.clip(np.searchsorted(buckets, t, side="right") - 1, 0, n // 2 - 1)
    keep = set()
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    for lo, hi in zip(starts, np.r_[starts[1:], t.size], strict=True):
        seg = v[lo:hi]
        keep.add(lo + int(np.argmin(seg)))
        keep.add(lo + int(np.argmax(seg)))
    idx = np.array(sorted(keep))
    return t[idx], v[idx]


def counter_tracks(db, procs, t0: int) -> list[dict]:
    df = counter_frame(db)
    if df.empty:
        return []
    group = {p.guid: i for i, p in enumerate(procs)}
    out = []
    for (guid, name, units, agent), g in df.groupby(["guid", "name", "units", "agent_id"],
                                                     sort=True, dropna=False):
        if guid not in group:
            continue
        p = procs[group[guid]]
        where = ""
        if agent == agent and agent is not None:  # not NaN
            idx = p.agents.get(int(agent))
            where = f"GPU {idx[0]} · " if idx else ""
        t, v = _thin(g["t"].to_numpy(dtype=np.int64) - t0, g["value"].to_numpy(dtype=float))
        out.append({"label": f"{where}{name}" + (f" ({units})" if units else ""),
                    "group": group[guid], "t": t.tolist(), "v": v.tolist()})
    return out
