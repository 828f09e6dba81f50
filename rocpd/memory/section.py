"""The report's "GPU memory" section (hooked in by name from rocpd.report.sections.OPTIONAL, as
the other sections that live beside their analysis): each GPU's peaks, allocated / reserved /
held at the driver over the run and per step, what was live at the peak by line (a table and a
flame graph), the lines that leak, fragmentation at the peak and any out-of-memory; none without
GPU memory records."""

from __future__ import annotations

from ..export.flamegraph import render
from ..report import charts
from ..report.sections import Section, esc, table_html, table_md
from .tables import LEAK_RULE
from .text import human, oom_text, peaks

_DROP = ["process", "rank", "pid"]


def report_section(ctx):
    """`rocpd report`: the memory analysis the report's analysis made (rocpd.analysis)."""
    m = getattr(ctx.analysis, "memory", None)
    if m is None:
        return None
    top = ctx.top
    many = len(m.summary["process"].unique()) > 1

    def cut(df):
        return human(df if many else df.drop(columns=_DROP))

    head = "; ".join(f"{r.process + ' ' if many else ''}GPU {r.device}: {peaks(r)}"
                     for r in m.summary.itertuples(index=False)) + "."
    notes = " ".join(m.notes)
    leaks = (cut(m.leaks) if len(m.leaks) else None)
    parts_html = [f"<p>{esc(head)}</p>"]
    parts_md = [f"{head}\n"]
    if notes:
        parts_html.append(f"<p class='muted'>{esc(notes)}</p>")
        parts_md.append(f"_{notes}_\n")
    chart = _timeline_div(ctx, m)
    if chart:
        parts_html.append(chart)
    if len(m.oom):
        text = oom_text(m).split("\nlive then")[0]
        parts_html.append(f"<h3>Out of memory</h3><p>{esc(text)}</p>"
                          f"{table_html(cut(m.oom_live), max_rows=top)}")
        parts_md.append(f"**Out of memory**\n\n{text}\n\n{table_md(cut(m.oom_live), max_rows=top)}")
    if len(m.peak):
        parts_html.append(f"<h3>Live at the peak, by line</h3>{table_html(cut(m.peak), max_rows=top)}")
        parts_md.append(f"**Live at the peak, by line**\n\n{table_md(cut(m.peak), max_rows=top)}")
        if ctx.html and m.folded:
            parts_html.append("<h3>Live bytes at the peak by call stack</h3><div style='overflow-x:"
                              f"auto'>{render(m.folded, title='GPU memory live at the peak', unit='bytes')}"
                              "</div>")
    if leaks is not None:
        parts_html.append(f"<h3>Leaks: lines growing step over step</h3>"
                          f"{table_html(leaks, max_rows=top)}<p class='muted'>{esc(LEAK_RULE)}</p>")
        parts_md.append(f"**Leaks: lines growing step over step**\n\n{table_md(leaks, max_rows=top)}"
                        f"\n_{LEAK_RULE}_\n")
    if len(m.steps):
        st = cut(m.steps.drop(columns=["start", "end"]))
        parts_html.append(f"<h3>Per step</h3>{table_html(st, max_rows=top)}")
        parts_md.append(f"**Per step**\n\n{table_md(st, max_rows=top)}")
    if len(m.fragmentation):
        frag = cut(m.fragmentation.drop(columns=["time"]))
        parts_html.append(f"<h3>Fragmentation at the peak</h3>{table_html(frag)}")
        parts_md.append(f"**Fragmentation at the peak**\n\n{table_md(frag)}")
    return Section("memory", "GPU memory: the peak, leaks and fragmentation by Python line",
                   html="".join(parts_html), markdown="\n".join(parts_md))


def _timeline_div(ctx, m) -> str:
    """Allocated, reserved and held at the driver over the run (plotly), HTML reports only."""
    if not ctx.html or not len(m.timeline):
        return ""
    if not charts.available():
        return ""
    g = charts.go()
    fig = g.Figure()
    tl = m.timeline
    for (proc, dev), d in tl.groupby(["process", "device"], sort=False):
        for col, label in (("AllocatedBytes", "allocated"), ("ReservedBytes", "reserved"),
                           ("DriverBytes", "held at the driver")):
            if not d[col].any():
                continue
            fig.add_scatter(x=d["Seconds"], y=d[col] / (1 << 20), mode="lines", line_shape="hv",
                            name=f"{proc} GPU {dev} {label}",
                            hovertemplate="%{x:.3f} s: %{y:,.1f} MiB<extra></extra>")
    fig.update_xaxes(title_text="s from the first memory record (maximum of each slice)")
    fig.update_yaxes(title_text="MiB")
    fig.update_layout(title=dict(text="GPU memory over the run", x=0, font=dict(size=14)),
                      height=320, margin=dict(l=10, r=10, t=40, b=40),
                      legend=dict(orientation="h", y=-0.25), template="plotly_white")
    return charts.div(fig)
