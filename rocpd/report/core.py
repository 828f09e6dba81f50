"""The report's own sections, in page order (see sections.py for the shape and for the optional
ones). Each returns HTML, Markdown and static figures of the same content."""

from __future__ import annotations

from importlib import resources

from ..analysis.quiet import grouped
from ..summary import stats
from . import charts, cpu, figures
from . import timeline as tl
from .sections import Section, cut_note, esc, table_html, table_md


def _chart(ctx, make, *args, post_script=None) -> str:
    """A plotly chart's div; without plotly installed, one line saying so (the tables and the
    timeline do not need it)."""
    if not ctx.html:
        return ""
    if not charts.available():
        return ("<p class='warn'>chart left out: plotly is not installed (pip install plotly)</p>")
    fig = make(*args)
    return charts.div(fig, post_script) if fig is not None else ""


def findings(ctx) -> Section:
    fs = ctx.analysis.findings()
    if not fs:
        body = "<p>No finding: nothing in these numbers matches a known problem pattern.</p>"
        return Section("findings", "Findings", body, "_No finding._\n")
    cards, md = [], []
    for i, f in enumerate(fs, 1):
        ev = "".join(f"<li>{esc(e)}</li>" for e in f.evidence)
        sites = ""
        if f.sites:
            sites = "<p class='sites'>" + " ".join(f"<code title='{esc(s)}'>{esc(s)}</code>"
                                                   for s in f.sites) + "</p>"
        cards.append(f"<div class='finding {f.severity}'><div class='fhead'><span class='badge'>"
                     f"{esc(f.severity)}</span> <b>{i}. {esc(f.title)}</b></div>"
                     f"<ul>{ev}</ul><p class='sugg'>→ {esc(f.suggestion)}</p>{sites}</div>")
        md.append(f"{i}. **[{f.severity}] {f.title}**\n" + "".join(f"   - {e}\n" for e in f.evidence)
                  + f"   - → _{f.suggestion}_\n")
    return Section("findings", "Findings", "\n".join(cards), "\n".join(md))


def timeline(ctx) -> Section:
    if not ctx.html:  # a PNG of the GPU work (figures.timeline), where there is some
        if not any(p.gpu_ops for p in ctx.analysis.processes):
            return Section("timeline", "Timeline", "", "_No GPU work recorded: no timeline to draw._\n")
        return Section("timeline", "Timeline", "", "",
                       {"timeline": lambda: figures.timeline(ctx.analysis)})
    data = tl.build(ctx.db, ctx.analysis, ctx.max_slices)
    js = resources.files(__package__).joinpath("timeline.js").read_text(encoding="utf-8")
    notes = []
    if data["dropped"]:
        notes.append(f"{data['dropped']} of {data['n'] + data['dropped']} slices are not drawn (the "
                     "report keeps its size bounded); the Perfetto trace has them all.")
    if data["steps_left_out"]:
        notes.append(f"The first {len(data['steps'])} steps are listed; "
                     f"{data['steps_left_out']} more are not.")
    note = " ".join(notes)
    if not data["n"] and not data["counters"]:
        return Section("timeline", "Timeline", "<p>No activity recorded.</p>",
                       "_No activity recorded._\n")
    steps = "<option value='all'>whole run</option>"
    body = (f"<div class='tl-bar'><label>Show: <select id='tl-step'>{steps}</select></label> "
            "<button id='tl-in'>zoom in</button> <button id='tl-out'>zoom out</button> "
            "<button id='tl-reset'>reset</button> <span id='tl-info' class='muted'></span>"
            "<span class='muted'> · wheel zooms, drag pans, double-click resets; keys W/S/A/D</span></div>"
            "<div class='tl-legend'>"
            + "".join(f"<span><i style='background:{c}'></i>{esc(k)}</span>" for k, c in (
                ("compute", "#3b75af"), ("communication", "#8e44ad"), ("memory", "#ef8636"),
                ("ROCTx range", "#5a9e56"), ("synchronize", "#c0392b"), ("copy to host", "#d35400"),
                ("API call", "#9aa5b1")))
            + "</div><div class='tl-wrap'><canvas id='tl-canvas'></canvas><div id='tl-tip'></div></div>"
            f"<script type='application/json' id='tl-data'>{tl.to_json(data)}</script>"
            f"<script>{js}</script>")
    return Section("timeline", "Timeline", body, "",
                   {"timeline": lambda: figures.timeline(ctx.analysis)}, note)


def _omitted(a, sections) -> tuple[str, str]:
    """HTML and Markdown lines saying which tables are left out and why (nothing recorded)."""
    lines = grouped(a, sections)
    return ("".join(f"<p class='muted'>{esc(x)}</p>" for x in lines),
            "".join(f"_{x}_\n\n" for x in lines))


def breakdown(ctx) -> Section | None:
    a = ctx.analysis
    if a.run.empty:  # no GPU work: one line for the GPU tables instead of empty or zero ones
        h, md = _omitted(a, ["temporal", "idle", "per-step", "launch", "overlap", "stragglers",
                             "lines", "waits", "ranges"])
        return Section("breakdown", "Where the time goes", h, md) if h else None
    parts_html, figs = [], {"breakdown": lambda: figures.time_breakdown(a)}
    parts_html.append(_chart(ctx, charts.time_breakdown, a))
    t, i = a.temporal, a.idle
    parts_html += ["<h3>Temporal breakdown</h3>", table_html(t, ctx.units),
                   "<h3>Idle breakdown</h3>", table_html(i, ctx.units)]
    md = ("**Temporal breakdown**\n\n" + table_md(t, ctx.units) + "\n**Idle breakdown**\n\n"
          + table_md(i, ctx.units))
    note = ("Windows run from each GPU's first activity to its last. Idle causes: host late = the "
            "next launch came after the GPU ran dry; sync = the host waited in a synchronisation "
            "or a copy to host; between steps = after one step's work, before the next's.")
    return Section("breakdown", "Where the time goes", "\n".join(parts_html), md, figs, note)


def steps(ctx) -> Section | None:
    a = ctx.analysis
    if a.per_step.empty:
        return None
    body = _chart(ctx, charts.step_breakdown, a, post_script=charts.STEP_CLICK)
    cols = [c for c in a.per_step.columns if c not in ("host_start", "host_end", "start", "end")]
    body += "<h3>Per-step table</h3>" + table_html(a.per_step[cols], ctx.units, ctx.top * 5)
    figs = {"steps": lambda: figures.step_breakdown(a)}
    src = {"given": "given", "detected": "detected: the most repeated range enclosing the GPU work"}
    note = f"Step range '{a.step_name}' ({src.get(a.step_source, a.step_source)})."
    return Section("steps", "Per step", body, table_md(a.per_step[cols], ctx.units, ctx.top), figs, note)


def launches(ctx) -> Section | None:
    a = ctx.analysis
    if a.launch_stats.empty:
        return None
    body = _chart(ctx, charts.launch_scatter, a)
    body += ("<h3>Per kernel</h3>" + table_html(a.launch_stats, ctx.units, ctx.top)
             + "<h3>Per process</h3>" + table_html(a.launch_summary, ctx.units))
    figs = {"launches": lambda: figures.launch_scatter(a)}
    note = (f"Launch = the API call that launched the kernel (host time); delay = kernel start "
            f"minus call start; short = under {a.short_ns / 1e3:g} µs.")
    md = table_md(a.launch_stats, ctx.units, ctx.top) + "\n" + table_md(a.launch_summary, ctx.units)
    return Section("launches", "Kernel launch statistics", body, md, figs, note)


def code(ctx) -> Section | None:
    a = ctx.analysis
    if a.run.empty or (a.lines.empty and a.waits.empty and a.ranges.empty):
        return None  # without GPU work, the breakdown's line says why
    body, md = [], []
    figs = {"lines": lambda: figures.top_lines(a)} if len(a.lines) else {}
    if len(a.lines):
        body.append(_chart(ctx, charts.top_lines, a))
    for name, title, df in (("lines", "GPU time by Python line (launch sites)", a.lines),
                            ("waits", "Host waits by Python line", a.waits),
                            ("ranges", "GPU time by ROCTx range", a.ranges)):
        if len(df) and not a.omitted(name):
            body.append(f"<h3>{esc(title)}</h3>" + table_html(df, ctx.units, ctx.top))
            md.append(f"**{title}**\n\n" + table_md(df, ctx.units, ctx.top))
    h, m = _omitted(a, ["lines", "waits", "ranges"])
    body.append(h)
    md.append(m)
    return Section("code", "Code: Python lines and ROCTx ranges", "\n".join(body), "\n".join(md), figs)


def ranks(ctx) -> Section | None:
    a = ctx.analysis
    ov = a.overlap
    if ov.empty or (len(a.processes) < 2 and not ov["CommTotalNs"].sum()):
        return None
    body = ("<h3>Communication / computation overlap</h3>" + table_html(ov, ctx.units)
            + "<h3>Stragglers</h3>" + table_html(a.stragglers, ctx.units))
    md = table_md(ov, ctx.units) + "\n" + table_md(a.stragglers, ctx.units)
    return Section("ranks", "Ranks: communication and stragglers", body, md)


def summary_tables(ctx) -> Section:
    tables = ctx.summary_tables
    busy = ctx.busy
    body, md = [], []
    if len(busy):
        cols = ["pid", "agent_id", "agent_abs_index", "type", "GpuTime", "WallTime", "BusyPercent"]
        body.append("<h3>GPU busy (first to last GPU activity of all files)</h3>"
                    + table_html(busy[cols], ctx.units))
        md.append("**GPU busy**\n\n" + table_md(busy[cols], ctx.units))
    if not tables:
        body.append("<p>No timed records.</p>")
    for stem, df in tables.items():
        shown = stats.scale(df, ctx.units)
        rows = df.attrs.get("rows", len(df))
        more = f" (top {ctx.top} of {rows})" if rows > ctx.top else ""
        cut = f"<p class='muted'>{esc(cut_note(rows - ctx.top))}</p>" if more else ""
        body.append(f"<h3>{esc(stem.upper())}_STATS{esc(more)}</h3>" + table_html(shown.head(ctx.top))
                    + cut)
        md.append(f"**{stem.upper()}_STATS{more}**\n\n" + table_md(shown.head(ctx.top))
                  + (f"\n_{cut_note(rows - ctx.top)}_\n" if more else ""))
    note = f"rocprofv3's summary tables; times in {ctx.units}; StdDev is the sample standard deviation."
    return Section("tables", "Summary tables", "\n".join(body), "\n".join(md), {}, note)


BEFORE_OPTIONAL = [findings, timeline, breakdown, cpu.section, steps]
AFTER_OPTIONAL = [launches, code, ranks, summary_tables]
