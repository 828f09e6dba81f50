"""GPU memory at the peak of two runs (rocpd.memory), compared when both recorded GPU memory
(`rocprof run --memory-allocation-trace`). A run's peak is its largest device peak of allocated
(over its processes and GPUs); what was live there is matched by line (file name and line
number, so that two checkouts in different folders match). The peak is a count of bytes, not a
time with step-to-step noise: every change is reported, those of at least ``MIN_CHANGE`` of the
baseline's peak (and 1 MiB) as changed, and the rows say which lines moved it."""

from __future__ import annotations

import pandas as pd

from ..analysis.sites import short_site
from ..memory.text import fmt_bytes

COLUMNS = ["metric", "line", "BaseBytes", "NewBytes", "DeltaBytes", "DeltaPercent", "changed"]
MIN_CHANGE = 0.05
MIN_BYTES = 1 << 20
TOP_LINES = 5


def _peak(side):
    """(peak allocated, peak reserved, {short line: live bytes at the peak}) or None."""
    m = getattr(side, "memory", None)
    if m is None or not len(m.summary) or not m.has_lines:
        return None
    s = m.summary.sort_values("PeakAllocatedBytes", ascending=False, kind="stable").iloc[0]
    p = m.peak[(m.peak["process"] == s["process"]) & (m.peak["device"] == s["device"])]
    lines: dict[str, int] = {}
    for line, b in zip(p["line"], p["LiveBytes"], strict=True):
        k = short_site(line)
        lines[k] = lines.get(k, 0) + int(b)
    return int(s["PeakAllocatedBytes"]), int(m.summary["PeakReservedBytes"].max()), lines


def compare(base, new):
    """The table (COLUMNS): peak allocated, peak reserved, then the lines whose live bytes at
    the peak changed the most; None unless both sides recorded GPU memory."""
    a, b = _peak(base), _peak(new)
    if a is None or b is None:
        return None
    floor = max(MIN_BYTES, MIN_CHANGE * a[0])
    rows = [_row("peak allocated", "", a[0], b[0], floor), _row("peak reserved", "", a[1], b[1], floor)]
    lines = [_row("live at the peak", k, a[2].get(k, 0), b[2].get(k, 0), floor)
             for k in sorted(set(a[2]) | set(b[2]))]
    lines = sorted((r for r in lines if r["DeltaBytes"]), key=lambda r: -abs(r["DeltaBytes"]))
    return pd.DataFrame(rows + lines[:TOP_LINES], columns=COLUMNS)


def _row(metric, line, x, y, floor) -> dict:
    d = y - x
    return {"metric": metric, "line": line, "BaseBytes": x, "NewBytes": y, "DeltaBytes": d,
            "DeltaPercent": 100.0 * d / x if x else float("nan"), "changed": abs(d) >= floor}


def text(df) -> str:
    """'GPU memory peak: 1.00 GiB -> 2.00 GiB (+1.00 GiB, +100.0%), changed; at the peak:
    model.py:23 +1.00 GiB (0 B -> 1.00 GiB)'."""
    if df is None or not len(df):
        return ""
    x = df.iloc[0]
    out = f"GPU memory peak: {_change(x)}"
    lines = df[(df["metric"] == "live at the peak") & df["changed"].astype(bool)]
    if len(lines):
        out += "; at the peak: " + ", ".join(
            f"{r.line} {_signed(r.DeltaBytes)} ({fmt_bytes(r.BaseBytes)} -> {fmt_bytes(r.NewBytes)})"
            for r in lines.itertuples(index=False))
    return out


def verdict(df) -> str:
    """'; GPU memory peak +1.00 GiB (+100.0%) at model.py:23' when the peak changed."""
    if df is None or not len(df) or not bool(df.iloc[0]["changed"]):
        return ""
    x = df.iloc[0]
    lines = df[(df["metric"] == "live at the peak") & df["changed"].astype(bool)]
    at = f" at {lines.iloc[0]['line']}" if len(lines) else ""
    pct = "" if x["DeltaPercent"] != x["DeltaPercent"] else f" ({x['DeltaPercent']:+.1f}%)"
    return f"; GPU memory peak {_signed(x['DeltaBytes'])}{pct}{at}"


def _change(x) -> str:
    pct = "" if x["DeltaPercent"] != x["DeltaPercent"] else f", {x['DeltaPercent']:+.1f}%"
    return (f"{fmt_bytes(x['BaseBytes'])} -> {fmt_bytes(x['NewBytes'])} ({_signed(x['DeltaBytes'])}"
            f"{pct}), {'changed' if x['changed'] else 'no change'}")


def _signed(n) -> str:
    return ("+" if n >= 0 else "-") + fmt_bytes(abs(n))
