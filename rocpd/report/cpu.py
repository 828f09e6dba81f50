"""The report's section for a run without GPU work: where its time went by ROCTx phase and by
step, its hottest sampled lines and a flame graph of its call-stack samples (the SVG of
rocpd.export.flamegraph, inline in HTML, a file beside Markdown)."""

from __future__ import annotations

from ..analysis.cpu import has_gpu_work
from ..export.flamegraph import render
from ..summary.samples import collapsed
from .sections import Section, esc, table_html, table_md

FLAME_WIDTH = 1200


def flame_svg(db) -> str | None:
    """The flame graph of every sample in ``db`` as SVG text, or None without samples."""
    folded = collapsed(db)
    return render(folded, title="Call-stack samples", width=FLAME_WIDTH) if folded else None


def section(ctx) -> Section | None:
    a = ctx.analysis
    if has_gpu_work(a):
        return None
    ph, st, hot = a.phases, a.steps, a.hot_lines
    svg = flame_svg(ctx.db) if len(hot) else None
    if ph.empty and hot.empty:
        return None
    body, md = [], []
    tables = [("ROCTx phases", ph.drop(columns=["WallNs"]) if len(ph) else ph, ctx.top),
              ("Steps", st, ctx.top * 5),
              ("Hottest sampled lines", hot, ctx.top)]
    for title, df, rows in tables:
        if len(df):
            body.append(f"<h3>{esc(title)}</h3>" + table_html(df, ctx.units, rows))
            md.append(f"**{title}**\n\n" + table_md(df, ctx.units, rows))
    figs = {}
    if svg:
        body.append("<h3>Flame graph of the call-stack samples</h3>"
                    "<p class='muted'>width = samples; hover a frame for its count</p>"
                    f"<div class='flame'>{svg}</div>")
        figs["flamegraph"] = svg  # Markdown: written beside the page as flamegraph.svg
    note = ("No GPU work was recorded: the time is read from the ROCTx ranges (a phase's time "
            "counts the moments some thread was inside it, as a share of the process's first "
            "to last recorded range or sample) and from the call-stack samples.")
    return Section("cpu", "Where the time goes (ROCTx phases and samples)", "\n".join(body),
                   "\n".join(md), figs, note)
