"""The diff in the report: what changed against a baseline run (verdict, the changes per line,
kernel and phase, regressions first, what appeared or vanished), the median step of each run
side by side, and the ranks. Shown in ``rocpd report B --baseline A`` (sections of the usual
report, through :data:`rocpd.report.sections.OPTIONAL`) and as a page of its own by
``rocpd diff A B -o diff.html`` (:func:`write`)."""

from __future__ import annotations

import datetime
import os
from importlib import resources

from ..diff.text import rule, where
from ..errors import RocpdError
from ..io.output_file import write_text
from . import _CSS, charts
from . import diff_timeline as dt
from .charts import plotly_js
from .sections import Section, esc, table_html, table_md
from .timeline import to_json

ITEM_COLS = ["line", "kind", "name", "BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs",
             "DeltaPercent", "verdict", "note"]
LINE_COLS = ["line", "BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs", "DeltaPercent",
             "verdict", "top_item"]
KERNEL_COLS = ["name", "kind", "BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs",
               "DeltaPercent", "verdict", "lines"]
PHASE_COLS = ["phase", "BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs", "DeltaPercent",
              "verdict"]
SUMMARY_COLS = ["metric", *PHASE_COLS[1:]]
RANK_COLS = ["rank", "BaseSteps", "NewSteps", "BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs",
             "NewComputeNs", "top_change"]
_TIMELINE_CSS = ("#tld-canvas { display: block; cursor: grab; outline: none; } #tld-tip { position:"
                 " absolute; display: none; background: rgba(30,30,30,.92); color: #fff; font-size:"
                 " 12px; padding: 4px 7px; border-radius: 3px; white-space: pre; pointer-events:"
                 " none; max-width: 600px; overflow: hidden; }")


def _cols(df, cols):
    return df[[c for c in cols if c in df.columns]] if df is not None and len(df) else df


def _tables(d, units, top, md: bool) -> str:
    fmt = (lambda df, n=None: table_md(df, units, n)) if md else \
        (lambda df, n=None: table_html(df, units, n))
    head = (lambda t: f"\n**{t}**\n\n") if md else (lambda t: f"<h3>{esc(t)}</h3>")
    out = [head("Step"), fmt(_cols(d.summary, SUMMARY_COLS)),
           head("Changes, regressions first (line, kind, kernel)"), fmt(_cols(d.items, ITEM_COLS), top),
           head("Lines"), fmt(_cols(d.lines, LINE_COLS), top),
           head("Kernels"), fmt(_cols(d.kernels, KERNEL_COLS), top),
           head("Phases"), fmt(_cols(d.phases, PHASE_COLS))]
    if len(d.appeared):
        out += [head("Appeared or vanished"), fmt(d.appeared, top)]
    return "".join(out)


def _verdict(d, units, md: bool) -> str:
    lines = [f"Verdict: {d.verdict(units)}", *(f"Note: {n}" for n in d.notes)]
    if md:
        return "".join(f"{x}\n\n" for x in lines)
    cls = "warn" if d.changed else ""
    return "".join(f"<p class='{cls}'>{esc(x)}</p>" for x in lines)


def _settings_note(d, units: str) -> str:
    s = d.settings
    return (f"Times {s.statistic()} (of {d.steps_base} baseline and {d.steps_new} new steps)."
            f" CI: {s.confidence:.0%} bootstrap interval of the change "
            f"({s.resamples} resamples of the steps, seed {s.seed}); significant: "
            f"{rule(d, units)}.")


def _chart(d, units):
    if not charts.available() or not len(d.lines):
        return ""
    go = charts.go()
    df = d.lines.head(15).iloc[::-1]
    div = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[units]
    x = df["DeltaNs"] / div
    err = dict(type="data", symmetric=False, array=(df["CiHighNs"] - df["DeltaNs"]) / div,
               arrayminus=(df["DeltaNs"] - df["CiLowNs"]) / div)
    colors = ["#c0392b" if s and v > 0 else "#2e86c1" if s else "#aab7b8"
              for s, v in zip(df["significant"], df["DeltaNs"], strict=True)]
    fig = go.Figure(go.Bar(x=x, y=df["line"], orientation="h", marker_color=colors, error_x=err,
                           hovertext=df["top_item"], name="change per step"))
    fig.update_layout(title=dict(text=f"Change per step by line ({units}; bars: {len(df)} largest,"
                                      " red = significant regression)", x=0, font=dict(size=14)),
                      height=120 + 24 * len(df), margin=dict(l=10, r=10, t=40, b=30),
                      template="plotly_white")
    return charts.div(fig)


def changes_section(d, units: str = "us", top: int = 20, html: bool = True) -> Section:
    body = _verdict(d, units, False) + (_chart(d, units) if html else "") + _tables(d, units, top, False)
    md = _verdict(d, units, True) + _tables(d, units, top, True)
    return Section("diff", "Changes against the baseline", body, md, {}, _settings_note(d, units))


def timeline_section(d) -> Section | None:
    data = dt.build(d)
    if data is None:
        return None
    js = resources.files(__package__).joinpath("timeline.js").read_text(encoding="utf-8")
    body = (f"<style>{_TIMELINE_CSS}</style>"
            "<div class='tl-bar'><button id='tld-in'>zoom in</button> <button id='tld-out'>zoom"
            " out</button> <button id='tld-reset'>reset</button> <span id='tld-info' "
            "class='muted'></span></div><div class='tl-legend'>"
            "<span><i style='background:#3b75af'></i>compute</span>"
            "<span><i style='background:#8e44ad'></i>communication</span>"
            "<span><i style='background:#ef8636'></i>memory</span>"
            "<span><i style='background:#c0392b'></i>host wait</span>"
            "<span><i style='background:#fff;border:2px solid #e00000'></i>changed between the"
            f" runs ({data['marked']} slices)</span></div>"
            "<div class='tl-wrap'><canvas id='tld-canvas'></canvas><div id='tld-tip'></div></div>"
            f"<script type='application/json' id='tld-data'>{to_json(data)}</script>"
            f"<script data-tl='tld'>{js}</script>")
    who = f" of {d.slowest.scope}" if d.slowest is not None else ""
    note = (f"The step of median length{who} in each run, both from the step's start: the work"
            " whose time changed significantly, or that appeared (new run) or vanished (baseline),"
            " is outlined in red.")
    return Section("diff-timeline", "Median step, side by side", body, "", {}, note)


def ranks_section(d, units: str = "us", top: int = 20) -> Section | None:
    if d.ranks is None or not len(d.ranks):
        return None
    body = table_html(_cols(d.ranks, RANK_COLS), units)
    md = table_md(_cols(d.ranks, RANK_COLS), units)
    if d.slowest is not None:
        s = d.slowest
        body += (f"<h3>The new run's slowest rank: {esc(s.scope)} (most compute per step)</h3>"
                 + _verdict(s, units, False) + _tables(s, units, top, False))
        md += f"\n**The new run's slowest rank: {s.scope}**\n\n" + _verdict(s, units, True) + \
            _tables(s, units, top, True)
    note = ("Each rank against the same rank of the baseline. In synchronous data parallelism the"
            " ranks wait for the slowest in the collectives: the slowest rank's diff names the"
            " cause, the others' show the wait.")
    return Section("diff-ranks", "Ranks against the baseline", body, md, {}, note)


def sections(d, units: str = "us", top: int = 20, html: bool = True) -> list[Section]:
    out = [changes_section(d, units, top, html)]
    if html:
        out.append(timeline_section(d))
    out.append(ranks_section(d, units, top))
    return [s for s in out if s is not None]


# -- in `rocpd report B --baseline A` ----------------------------------------------------------
def report_changes(ctx) -> Section | None:
    d = getattr(ctx, "diff", None)
    return None if d is None else changes_section(d, ctx.units, ctx.top, ctx.html)


def report_timeline(ctx) -> Section | None:
    d = getattr(ctx, "diff", None)
    return None if d is None or not ctx.html else timeline_section(d)


def report_ranks(ctx) -> Section | None:
    d = getattr(ctx, "diff", None)
    return None if d is None else ranks_section(d, ctx.units, ctx.top)


# -- a page of its own: `rocpd diff A B -o diff.html` --------------------------------------------
def build(d, format: str = "html", title: str = "rocpd diff", top: int = 20, units: str = "us") -> str:
    secs = sections(d, units, top, html=format == "html")
    facts = [("baseline (A)", where(d.base.paths)), ("new (B)", where(d.new.paths)),
             ("steps", f"A: {d.base.step_name or 'none'} ({d.steps_base}), "
                       f"B: {d.new.step_name or 'none'} ({d.steps_new})"),
             ("generated", datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))]
    if format == "md":
        out = [f"# {title}\n", *(f"- **{k}**: {v}" for k, v in facts), ""]
        for s in secs:
            out += [f"## {s.title}\n", f"_{s.note}_\n" if s.note else "", s.markdown]
        return "\n".join(out) + "\n"
    head = (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{_CSS}</style>")
    if any("Plotly.newPlot" in s.html for s in secs):
        head += f"<script>{plotly_js()}</script>"
    parts = [head + "</head><body>", f"<h1>{esc(title)}</h1>", "<table class='facts'>"
             + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts) + "</table>",
             "<nav>" + "".join(f"<a href='#{esc(s.id)}'>{esc(s.title)}</a>" for s in secs) + "</nav>"]
    for s in secs:
        parts.append(f"<section id='{esc(s.id)}'><h2>{esc(s.title)}</h2>"
                     + (f"<p class='muted'>{esc(s.note)}</p>" if s.note else "") + s.html + "</section>")
    return "\n".join(parts) + "\n</body></html>\n"


def write(d, path: str, format: str | None = None, **options) -> str:
    """Write the diff's page to ``path`` (HTML, or Markdown for ``format="md"`` / a .md name)."""
    fmt = format or ("md" if str(path).endswith(".md") else "html")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RocpdError(f"rocpd diff: folder {folder} does not exist; create it or choose another -o")
    write_text(path, build(d, format=fmt, **options), encoding="utf-8")
    return str(path)
