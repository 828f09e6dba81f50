"""Console text of the collective tables, for `rocpd summary` and `rocpd ranks`."""

from __future__ import annotations

import pandas as pd

from ..textfmt import more_rows
from . import calls, clock_offsets, plugin_state, summary
from .bandwidth import bucket_label, bus_factor
from .clock import arrival_waits

_SUMMARY_COLS = ["Operation", "Size", "Calls", "Ranks", "AverageNs", "AlgBwGBs", "BusBwGBs",
                 "MinBusBwGBs", "MaxBusBwGBs", "Time"]


def _table(df, top: int | None) -> str:
    shown = df if top is None else df.head(top)
    text = shown.to_string(index=False, float_format=lambda v: f"{v:.2f}")
    if top is not None and len(df) > top:
        text += "\n" + more_rows(len(df) - top)
    return text + "\n"


def format_summary(db, top: int | None = None) -> str:
    """== COLLECTIVES == per operation and size bucket with algorithm/bus bandwidth (GB/s), or ""
    when no collective call was recorded (and none was asked for)."""
    c = calls(db)
    notes = plugin_state(db)
    if c.empty:
        if not any("never loaded" in n for n in notes):
            return ""
        return "== COLLECTIVES ==\n" + "\n".join(f"note: {n}" for n in notes) + "\n"
    s = summary(c)
    head = ("== COLLECTIVES == (bandwidth in GB/s as nccl-tests defines it; Time: kernel = the "
            "call's kernel time, call = the host call's duration)\n")
    return head + _table(s[_SUMMARY_COLS], top)


def per_size_across_ranks(c):
    """Per operation and size bucket: each rank's bus bandwidth (its summed bytes over its summed
    time), their median, and the slowest rank."""
    rows = []
    for (op, b), g in c.groupby(["op", "bucket"], sort=True):
        n = int(g["nranks"].fillna(1).max())
        sums = g.groupby("rank")[["size_bytes", "time_ns"]].sum()
        sums = sums[sums["time_ns"] > 0]
        per = sums["size_bytes"] / sums["time_ns"] * bus_factor(op, n)
        if per.empty:
            continue
        rows.append({"Operation": op, "Size": bucket_label(int(b)), "Ranks": len(per),
                     "MedianBusBwGBs": float(per.median()), "SlowestRank": int(per.idxmin()),
                     "SlowestBusBwGBs": float(per.min()), "FastestBusBwGBs": float(per.max())})
    return pd.DataFrame(rows)


def format_ranks(db, top: int | None = 10) -> str:
    """Per rank and operation: calls, bus bandwidth; and the hosts' clock offsets."""
    c = calls(db)
    if c.empty:
        return ""
    parts = []
    g = c.groupby(["rank", "op"], dropna=False)
    per = g.agg(Calls=("op", "size"), Bytes=("size_bytes", "sum"), TimeNs=("time_ns", "sum"),
                BusBwGBs=("busbw_gbs", "median")).reset_index()
    per = per.rename(columns={"rank": "Rank", "op": "Operation", "BusBwGBs": "MedianBusBwGBs"})
    parts.append("== COLLECTIVES PER RANK == (median per-call bus bandwidth, GB/s)\n"
                 + _table(per, None if top is None else top * 4))
    by_size = per_size_across_ranks(c)
    parts.append("== COLLECTIVES PER SIZE ACROSS RANKS == (bus bandwidth per rank = its bytes over "
                 "its kernel time, GB/s; the slowest rank per operation and size. A rank that arrives "
                 "early waits inside the kernel: its bandwidth is low because it waits, see the "
                 "arrivals below)\n"
                 + _table(by_size, None if top is None else top * 4))
    off = clock_offsets(c)
    waits = arrival_waits(c, off)
    if len(waits):
        w = waits.assign(mean_wait_us=waits["mean_wait_ns"] / 1e3,
                         total_wait_ms=waits["total_wait_ns"] / 1e6)
        parts.append("== COLLECTIVE ARRIVALS == (per rank, on one clock: time waited for the last "
                     "rank; the straggler waits least and arrives last most often)\n"
                     + w[["rank", "collectives", "mean_wait_us", "total_wait_ms", "last_arrivals"]]
                     .to_string(index=False, float_format=lambda v: f"{v:.1f}") + "\n")
    if len(off):
        off = off.assign(offset_ms=off["offset_ns"] / 1e6, uncertainty_us=off["uncertainty_ns"] / 1e3)
        parts.append(
            "== CLOCK OFFSETS == (per host against the reference host, from collective completion "
            "times; subtract to align. The error is at most the collectives' completion latency; "
            "uncertainty: half the spread of the per-collective differences)\n"
            + off[["host", "ranks", "offset_ms", "uncertainty_us", "collectives", "reference"]]
            .to_string(index=False, float_format=lambda v: f"{v:.3f}") + "\n")
    return "\n".join(parts)
