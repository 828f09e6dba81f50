"""What the findings read: totals over the steps (each step's window, or the steps part of the
run between the first step and the last), the gaps that lie there, and the idle charged to
waits there. Without steps, the run (from each GPU's first activity) is the scope."""

from __future__ import annotations

import numpy as np

_COLS = ["SpanNs", "ComputeNs", "CommunicationNs", "MemoryNs", "IdleNs", "HostLateNs", "SyncNs",
         "OtherNs", "UnknownNs", "Kernels", "Copies"]


def windows(a):
    """Totals over every step's window (``unit`` "of each step"), else over the run."""
    rows = a._core()[1]
    unit = "of the run"
    if len(rows):
        rows = rows[rows["SpanNs"] > 0]
        unit = "of each step"
    if not len(rows):
        rows = a.run
        unit = "of the run"
    if not len(rows):
        return None, unit
    return rows[_COLS].sum(), unit


def steps_part(a):
    """Rows of the part of the run the findings read, per process and GPU: "steps" (first
    step's window to the last one's, the idle between them included) or "run"."""
    parts = a._core()[5]
    if parts.empty:
        return parts
    return parts[parts["part"].isin(("steps", "run"))]


def steps_total(a):
    rows = steps_part(a)
    if rows.empty or not rows["SpanNs"].sum():
        return None
    return rows[_COLS + ["BetweenStepsNs", "BusyNs", "CommTotalNs", "OverlapNs"]].sum()


def in_scope(a, p, gaps) -> np.ndarray:
    """Mask of the gaps of process ``p`` inside its GPUs' steps part."""
    rows = steps_part(a)
    mask = np.zeros(len(gaps), dtype=bool)
    if rows.empty or gaps.empty:
        return mask
    mine = rows[rows["pid"] == p.pid]
    gpu, s, e = (gaps[c].to_numpy() for c in ("gpu", "start", "end"))
    for r in mine.itertuples():
        mask |= (gpu == r.gpu) & (s >= r.start) & (e <= r.end)
    return mask


def waited_idle(a, kind: str, in_windows: bool = False) -> float:
    """GPU idle (ns) charged to waits of ``kind`` ("sync"/"d2h") in the steps part (only inside
    step windows with ``in_windows``)."""
    total = 0.0
    for p, gaps, blocking in a.gap_pieces():
        if gaps.empty or blocking.empty:
            continue
        m = in_scope(a, p, gaps) & (gaps["call"] >= 0).to_numpy()
        if in_windows and a.step_name:
            m &= (gaps["step"] >= 0).to_numpy()
        g = gaps[m]
        kinds = blocking["blocking"].to_numpy()[g["call"].to_numpy()]
        total += float((g["end"] - g["start"])[kinds == kind].sum())
    return total


def short_share(a) -> tuple[float, int]:
    ls = a.launch_summary
    k = int(ls["Kernels"].sum()) if len(ls) else 0
    return (float((ls["ShortPercent"] * ls["Kernels"]).sum() / k / 100.0) if k else 0.0), k


def median_gap(a) -> float:
    """Median GPU idle gap inside the steps (or the run), ns."""
    if "median_gap" in a._cache:  # read twice by the findings; a streamed run's gaps are on disk
        return a._cache["median_gap"]
    lens = [(g["end"] - g["start"]).to_numpy()[(g["step"] >= 0).to_numpy() if a.step_name else
                                                slice(None)] for _, g, _ in a.gap_pieces() if len(g)]
    lens = [x for x in lens if len(x)]
    a._cache["median_gap"] = out = float(np.median(np.concatenate(lens))) if lens else float("inf")
    return out
