"""The report: one self-contained HTML page (or Markdown with PNG plots) that says what is wrong
first — the findings of :mod:`rocpd.analysis` — then shows an interactive timeline, where each
GPU's time goes overall and per step, kernel launch statistics, the Python lines and ROCTx ranges
behind the GPU time, and rocprofv3's summary tables.

HTML: every script, style and image is inside the file (plotly.js inlined once, the timeline's
own renderer, PNGs as data URIs); nothing is fetched when it opens, so it works offline and can be
mailed. The Perfetto trace (written beside the report by ``write``) stays the deep-dive path; the
page links to it. Sections: :mod:`rocpd.report.core`; other modules hook theirs in through
:data:`rocpd.report.sections.OPTIONAL`.
"""

from __future__ import annotations

import datetime
import os

from ..analysis import analyze
from ..analysis.streamed import STREAM_ABOVE
from ..io.output_file import open_output, write_bytes
from ..summary.core import cached
from . import sections as _sections
from .sections import Context, Section, esc
from .trace_job import TraceJob

FORMATS = ("html", "md")
_WRITE_CHARS = 1 << 20  # a page is encoded and written this many characters at a time


def context(db, top: int = 20, units: str = "us", title: str = "rocpd report", step: str | None = None,
            perfetto: str | None = None, perfetto_note: str = "", max_slices: int = 400_000,
            baseline=None, **filters) -> Context:
    """``baseline``: a run (Connection, paths) to compare ``db`` with (rocpd.diff)."""
    diff = None
    if baseline is not None:
        from ..diff import diff as run_diff

        diff = run_diff(baseline, db, step=step, **filters)
    # A process too big to hold is swept (rocpd.analysis.streamed), keeping the first ops of
    # each stream that the timeline can draw.
    a = analyze(db, step=step, stream_above=STREAM_ABOVE, head=max_slices, **filters)
    return Context(db, a, top=top, units=units, title=title,
                   filters=filters, perfetto=perfetto, perfetto_note=perfetto_note,
                   max_slices=max_slices, diff=diff)


def collect(ctx: Context) -> list[Section]:
    from . import core

    out = []
    for func in core.BEFORE_OPTIONAL:
        s = func(ctx)
        if s is not None:
            out.append(s)
    out += _sections.run_optional(ctx)
    for func in core.AFTER_OPTIONAL:
        s = func(ctx)
        if s is not None:
            out.append(s)
    return out


def build(db, top: int = 20, units: str = "us", title: str = "rocpd report", format: str = "html",
          step: str | None = None, perfetto: str | None = None, perfetto_note: str = "",
          max_slices: int = 400_000, figure_dir: str | None = None, baseline=None, **filters) -> str:
    """The report as text: HTML (default) or Markdown (``format="md"``). ``figure_dir``: where
    PNGs of the figures go (Markdown references them relative to its own folder); ``baseline``:
    a run to show the changes against (rocpd.report.diff)."""
    return "\n".join(_pieces(db, top, units, title, format, step, perfetto, perfetto_note,
                             max_slices, figure_dir, baseline, **filters))


def _pieces(db, top: int = 20, units: str = "us", title: str = "rocpd report", format: str = "html",
            step: str | None = None, perfetto: str | None = None, perfetto_note: str = "",
            max_slices: int = 400_000, figure_dir: str | None = None, baseline=None,
            finish=None, **filters) -> list[str]:
    """The report's text in pieces that, joined by newlines, are the page (see :func:`build`):
    written one at a time, a large page is never held twice (joined, then encoded). ``finish``:
    called once the sections are made, returns the trace's (link, note) for the page."""
    if format not in FORMATS:
        raise ValueError(f"report format must be one of {', '.join(FORMATS)}, not {format!r}")
    with cached():
        ctx = context(db, top, units, title, step, perfetto, perfetto_note, max_slices, baseline,
                      **filters)
        ctx.format = format
        secs = collect(ctx)
        if finish is not None:
            ctx.perfetto, ctx.perfetto_note = finish()
        pngs = _save_figures(secs, figure_dir) if figure_dir else {}
        if format == "md":
            return [_markdown(ctx, secs, figure_dir, pngs)]
        return _html_parts(ctx, secs)


def write(db, path: str, **options) -> str:
    """Write the report to ``path``; returns ``path`` (see :func:`write_files` for the options
    and for every file written)."""
    return write_files(db, path, **options)[0]


def write_files(db, path: str, format: str | None = None, plots: str | None = None,
                perfetto: bool = False, notes: list | None = None, **options) -> list[str]:
    """Write the report to ``path`` (format from ``format`` or the extension: .md is Markdown);
    with ``perfetto`` (``rocpd report``'s default), the Perfetto trace beside it
    (``<stem>.pftrace``) for the page to link to; ``plots``: a folder for PNGs of the figures
    (Markdown: default ``<stem>_files``). Returns the paths written, the report first; what
    could not be written (the Perfetto trace) is said in the page and appended to ``notes``."""
    fmt = format or ("md" if str(path).endswith(".md") else "html")
    stem = os.path.splitext(str(path))[0]
    written = []
    job = None
    if perfetto:  # a large run's trace is written beside the analysis, by a process of its own
        job = TraceJob(db, stem + ".pftrace", {k: v for k, v in options.items() if k not in (
            "top", "units", "title", "step", "max_slices", "baseline")})

    def finish():
        trace, note = job.result()
        if trace:
            written.append(trace)
        elif notes is not None:
            notes.append(note)
        return (os.path.relpath(trace, os.path.dirname(os.path.abspath(path)) or ".")
                if trace else None), note

    figure_dir = plots or (stem + "_files" if fmt == "md" else None)
    try:
        pieces = _pieces(db, format=fmt, figure_dir=figure_dir,
                         finish=finish if job is not None else None, **options)
    except BaseException:
        if job is not None:
            job.cancel()
        raise
    with open_output(path, encoding="utf-8") as fh:
        for i, piece in enumerate(pieces):
            if i:
                fh.write("\n")
            for k in range(0, len(piece), _WRITE_CHARS):  # encoded a slice at a time
                fh.write(piece[k:k + _WRITE_CHARS])
    written.insert(0, str(path))
    if figure_dir and os.path.isdir(figure_dir):
        written += sorted(os.path.join(figure_dir, f) for f in os.listdir(figure_dir)
                          if f.endswith((".png", ".svg")))
    return written


def _save_figures(secs, figure_dir: str) -> dict[int, list[str]]:
    """PNG files of every section's figures (SVG for a figure given as SVG text: the flame
    graph); {section index: [file names]}."""
    from ..plots import png

    out: dict[int, list[str]] = {}
    for i, s in enumerate(secs):
        for name, fig in s.figures.items():
            fig = fig() if callable(fig) else fig
            if fig is None:
                continue
            os.makedirs(figure_dir, exist_ok=True)
            file = f"{name}.svg" if isinstance(fig, str) else f"{name}.png"
            write_bytes(os.path.join(figure_dir, file),
                        fig.encode("utf-8") if isinstance(fig, str) else png(fig))
            out.setdefault(i, []).append(file)
    return out


# ---- HTML ------------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; margin: 20px 28px; color: #222; max-width: 1500px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 30px;
  border-bottom: 1px solid #ccc; padding-bottom: 3px; } h3 { font-size: 14px; margin: 16px 0 4px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0; display: block; overflow-x: auto;
  max-width: 100%; }
th, td { border: 1px solid #d6dbe0; padding: 2px 7px; text-align: right; }
th { background: #eef2f7; } td:first-child, th:first-child { text-align: left; }
.facts th, .facts td { text-align: left; } .muted { color: #777; font-size: 12px; }
.warn { color: #b00020; font-weight: bold; } nav a { margin-right: 12px; font-size: 13px; }
.finding { border-left: 5px solid #9aa5b1; background: #f7f9fb; margin: 8px 0; padding: 6px 12px; }
.finding.high { border-color: #c0392b; } .finding.medium { border-color: #e67e22; }
.finding.low { border-color: #f1c40f; } .finding.caveat { border-color: #7f8c8d; background: #fdf6e3; }
.finding ul { margin: 4px 0 4px 8px; font-size: 13px; } .finding .sugg { margin: 4px 0; color: #1a5276; }
.badge { font-size: 11px; text-transform: uppercase; background: #555; color: #fff; padding: 1px 6px;
  border-radius: 3px; } .high .badge { background: #c0392b; } .medium .badge { background: #e67e22; }
.low .badge { background: #b7950b; } .sites code { background: #eef2f7; padding: 1px 4px; margin-right: 6px; }
.tl-bar { margin: 6px 0; font-size: 13px; } .tl-wrap { position: relative; border: 1px solid #d6dbe0; }
#tl-canvas { display: block; cursor: grab; outline: none; }
#tl-tip { position: absolute; display: none; background: rgba(30,30,30,.92); color: #fff;
  font-size: 12px; padding: 4px 7px; border-radius: 3px; white-space: pre; pointer-events: none;
  max-width: 600px; overflow: hidden; }
.tl-legend span { font-size: 12px; margin-right: 12px; } .tl-legend i { display: inline-block;
  width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
img { max-width: 100%; } .flame { overflow-x: auto; }
"""


def _facts(ctx) -> list[tuple[str, str]]:
    db, a = ctx.db, ctx.analysis
    procs = a.processes
    ranks = sorted({p.rank for p in procs if p.rank is not None})
    hosts = sorted({p.host for p in procs if p.host})
    spans = [p.gpu_span() for p in procs if p.gpu_ops]
    firsts = [s[0] for s in spans] + [int(df["start"].min()) for p in procs
                                      for df in (p.ranges, p.api) if len(df)]
    lasts = [s[1] for s in spans] + [int(df["end"].max()) for p in procs
                                     for df in (p.ranges, p.api) if len(df)]
    span = (max(lasts) - min(firsts)) / 1e6 if firsts else 0.0
    gpu_ops = sum(p.gpu_ops for p in procs)
    steps = {"given": f"'{a.step_name}' (given)", "detected": f"'{a.step_name}' (detected)",
             "none": "none found: the whole run is analysed", "off": "off"}[a.step_source]
    drops = db.dropped_records()
    lost = a.dropped
    return [
        ("databases", ", ".join(db.paths)),
        ("processes", f"{len(procs)}" + (f" (ranks {', '.join(map(str, ranks))})" if ranks else "")),
        ("hosts", ", ".join(hosts) or "(unknown)"),
        ("recorded", f"{span:.3f} ms from the first recorded activity to the last; {gpu_ops} GPU ops"),
        ("step range", steps),
        ("dropped records", "not recorded" if not drops else ("none" if lost == 0 else f"{lost} LOST")),
        ("filters", repr(ctx.filters) if ctx.filters else "none"),
        ("generated", datetime.datetime.now().strftime("%Y-%m-%d %H:%M")),
    ]


def _html_parts(ctx, secs) -> list[str]:
    from .charts import plotly_js

    uses_plotly = any("Plotly.newPlot" in s.html for s in secs)  # no lower-cased copy of a page
    head = (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{esc(ctx.title)}</title><style>{_CSS}</style>")
    if uses_plotly:
        head += f"<script>{plotly_js()}</script>"
    head += "</head><body>"
    parts = [head, f"<h1>{esc(ctx.title)}</h1>"]
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in _facts(ctx))
    parts.append(f"<details><summary class='muted'>run facts</summary><table class='facts'>{rows}"
                 "</table></details>")
    if ctx.analysis.dropped - ctx.analysis.samples_missed:  # missed samples: a finding
        parts.append("<p class='warn'>Some records were dropped while profiling: figures below "
                     "undercount.</p>")
    if ctx.perfetto:
        parts.append(f"<p>Deep dive: <a href='{esc(ctx.perfetto)}' download>{esc(ctx.perfetto)}</a> "
                     "— every record as a Perfetto trace; open it in the Perfetto UI (Open trace "
                     "file) or with trace_processor.</p>")
    else:
        if ctx.perfetto_note:
            parts.append(f"<p class='warn'>{esc(ctx.perfetto_note)}</p>")
        parts.append("<p class='muted'>Deep dive: <code>rocpd convert DB -f perfetto -o "
                     "trace.pftrace</code> writes every record as a Perfetto trace.</p>")
    parts.append("<nav>" + "".join(f"<a href='#{esc(s.id)}'>{esc(s.title)}</a>" for s in secs)
                 + "</nav>")
    for s in secs:
        parts.append(f"<section id='{esc(s.id)}'><h2>{esc(s.title)}</h2>")
        if s.note:
            parts.append(f"<p class='muted'>{esc(s.note)}</p>")
        parts.append(s.html)
        parts.append("</section>")
    parts.append("</body></html>\n")
    return parts


# ---- Markdown --------------------------------------------------------------------------------
def _markdown(ctx, secs, figure_dir: str | None, pngs: dict) -> str:
    out = [f"# {ctx.title}\n"]
    out += [f"- **{k}**: {v}" for k, v in _facts(ctx)]
    out.append("")
    if ctx.perfetto:
        out.append(f"Deep dive: [{ctx.perfetto}]({ctx.perfetto}) (Perfetto trace).\n")
    base = os.path.basename(figure_dir.rstrip("/")) if figure_dir else None
    for i, s in enumerate(secs):
        out.append(f"## {s.title}\n")
        if s.note:
            out.append(f"_{s.note}_\n")
        for f in pngs.get(i, []):
            out.append(f"![{f[:-4]}]({base}/{f})\n")
        if s.markdown:
            out.append(s.markdown)
    return "\n".join(out) + "\n"
