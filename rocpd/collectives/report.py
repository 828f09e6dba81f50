"""Report sections (rocpd.report.sections.OPTIONAL): collectives with their bandwidth and the
hosts' clock offsets; queue length per GPU stream over time."""

from __future__ import annotations

import pandas as pd

from ..report import charts
from ..report.sections import Section, table_html, table_md
from . import calls, clock_offsets, plugin_state, summary
from .queue import SUMMARY_COLUMNS
from .queue_stream import sweeps

MAX_POINTS = 20_000  # per stream in the chart: longer series are thinned (every n-th change)


def collectives_section(ctx):
    c = calls(ctx.db)
    notes = plugin_state(ctx.db)
    if c.empty:
        if any("never loaded" in n for n in notes):
            return Section("collectives", "Collectives", note=notes[0])
        return None
    s = summary(c)
    off = clock_offsets(c)
    parts_html = [table_html(s, ctx.units, ctx.top * 4)]
    parts_md = [table_md(s, ctx.units, ctx.top * 4)]
    if len(off):
        o = off.assign(offset_ms=off["offset_ns"] / 1e6, uncertainty_us=off["uncertainty_ns"] / 1e3)
        o = o[["host", "ranks", "offset_ms", "uncertainty_us", "collectives", "reference"]]
        head = ("Clock offsets between hosts, from collective completion times (subtract a "
                "host's offset from its times to align it with the reference host)")
        parts_html += [f"<h3>{head}</h3>", table_html(o, ctx.units)]
        parts_md += [f"\n**{head}**\n\n", table_md(o, ctx.units)]
    note = ("bandwidth in GB/s as nccl-tests defines it (bus bandwidth: algorithm bandwidth x "
            "2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter, all-to-all, 1 for "
            "broadcast, reduce, send/recv)")
    return Section("collectives", "Collectives", html="".join(parts_html),
                   markdown="".join(parts_md), note=note)


def queue_section(ctx):
    # Per stream, swept in time order: its summary row and the thinned series the charts draw,
    # never a stream's whole step function (two rows per kernel).
    rows, series, t0 = [], [], None
    for pid, sid, row, t, lv in sweeps(ctx.db, MAX_POINTS):
        rows.append(row)
        series.append((f"pid {pid} stream {sid}", t, lv))
        t0 = int(t[0]) if t0 is None else min(t0, int(t[0]))
    if not rows:
        return None
    s = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    q = [(name, (t - t0) / 1e6, pd.Series(lv)) for name, t, lv in series]
    html = table_html(s, ctx.units, ctx.top)
    if ctx.html:
        if charts.available():
            html = charts.div(_figure(q)) + html
    note = ("kernels launched and not yet finished per stream (HTA's queue length): near 0 the "
            "GPU waits for the host; a long queue means the host runs ahead")
    return Section("queue-length", "Queue length per stream", html=html,
                   markdown=table_md(s, ctx.units, ctx.top), figures={"queue_length": lambda: _png(q)},
                   note=note)


def _series(q):
    """(name, ms from the first change, levels) per stream, thinned to MAX_POINTS: from a
    queue_lengths frame, or as queue_section made them."""
    if isinstance(q, list):
        yield from q
        return
    for (_g, pid, sid), grp in q.groupby(["guid", "pid", "stream_id"], sort=True):
        step = max(1, len(grp) // MAX_POINTS)
        grp = grp.iloc[::step]
        yield f"pid {pid} stream {sid}", (grp["timestamp"] - q["timestamp"].min()) / 1e6, grp["queue_length"]


def _figure(q):
    go = charts.go()
    fig = go.Figure()
    for name, x, y in _series(q):
        fig.add_trace(go.Scattergl(x=x, y=y, mode="lines", line_shape="hv", name=name))
    fig.update_layout(title=dict(text="Queue length per stream", x=0, font=dict(size=14)),
                      height=320, margin=dict(l=10, r=10, t=40, b=40), template="plotly_white",
                      xaxis_title="ms from the first launch", yaxis_title="kernels queued")
    return fig


def _png(q):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3))
    for name, x, y in _series(q):
        ax.step(x, y, where="post", label=name, linewidth=0.8)
    ax.set_xlabel("ms from the first launch")
    ax.set_ylabel("kernels queued")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig
