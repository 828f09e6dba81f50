"""The report's sections. Each is a function ``section(ctx) -> Section | None`` (None: nothing to
show for these databases). ``CORE`` are the report's own, in page order; ``OPTIONAL`` is the place
for sections that live in other modules (a ranks x steps heat map, a roofline, device-metric
plots ...): add ``"package.module:function"`` there, or call :func:`register` — the function gets
the same :class:`Context` and returns a :class:`Section` with any of HTML (a plotly figure from
:func:`rocpd.report.charts.div`, a table from :func:`table_html`), Markdown and matplotlib
figures (written as PNG for ``--format md`` and ``--plots``). Optional sections appear after the
per-step charts, before the tables; a listed module that cannot be imported or a section that
fails is shown as a one-line note in its place, never dropped silently."""

from __future__ import annotations

import functools
import html
import importlib
from dataclasses import dataclass, field

import pandas as pd

from ..summary import stats
from ..textfmt import clip_long, more_rows, scaled

OPTIONAL: list[str] = [
    "rocpd.report.diff:report_changes",  # against a baseline run (rocpd report --baseline)
    "rocpd.report.diff:report_timeline",
    "rocpd.report.diff:report_ranks",
    "rocpd.ranks.section:report_section_for",  # ranks x steps heat map (two ranks or more)
    "rocpd.counters.section:report_section",  # speed of light and roofline from per-kernel counters
    "rocpd.pc_sampling.section:report_section",  # PC samples: hot kernels and their source lines
    "rocpd.energy.section:report_section",  # joules per step and range, the idle share (--energy)
    "rocpd.device_metrics.section:report_section",  # tensor, SM, DRAM per step/range (--gpu-metrics)
    "rocpd.memory.section:report_section",  # GPU memory by line: peak, leaks (--memory-allocation-trace)
    "rocpd.collectives.report:collectives_section",  # NCCL/RCCL calls, bandwidth, clock offsets
    "rocpd.collectives.report:queue_section",  # queue length per stream (HTA)
]
_REGISTERED: list = []


def register(func) -> None:
    """Add a section function (or "module:function") to every report built in this process."""
    _REGISTERED.append(func)


@dataclass
class Section:
    id: str
    title: str
    html: str = ""
    markdown: str = ""
    # name -> matplotlib Figure, or a function making one (called only when PNGs are written)
    figures: dict = field(default_factory=dict)
    note: str = ""  # one line under the title (e.g. why something is missing)


@dataclass
class Context:
    """What every section reads. ``analysis`` is computed once and shared."""

    db: object
    analysis: object
    top: int = 20
    units: str = "us"
    title: str = "rocpd report"
    filters: dict = field(default_factory=dict)
    perfetto: str | None = None  # the Perfetto trace beside the report (relative link), if any
    perfetto_note: str = ""
    max_slices: int = 400_000
    format: str = "html"
    diff: object = None  # rocpd.diff.Diff against a baseline run, if one was given

    @property
    def html(self) -> bool:
        """Whether interactive (plotly/canvas) parts are wanted: not for Markdown."""
        return self.format == "html"

    @functools.cached_property
    def summary_tables(self):
        """The summary tables' top rows (each with attrs["rows"], its length in full)."""
        return stats.collect(self.db, top=self.top, **self.filters)

    @functools.cached_property
    def busy(self):
        return self.db.busy(**self.filters)


def optional_sections() -> list[tuple[str, object]]:
    """(name, function or the import error text) for every optional section."""
    out = []
    for spec in [*OPTIONAL, *_REGISTERED]:
        if callable(spec):
            out.append((getattr(spec, "__name__", "section"), spec))
            continue
        mod, _, func = spec.partition(":")
        try:
            out.append((spec, getattr(importlib.import_module(mod), func)))
        except (ImportError, AttributeError) as e:
            out.append((spec, f"{type(e).__name__}: {e}"))
    return out


def run_optional(ctx: Context) -> list[Section]:
    out = []
    for name, func in optional_sections():
        if isinstance(func, str):
            out.append(Section(_slug(name), name, note=f"section unavailable ({func})"))
            continue
        try:
            sec = func(ctx)
        except Exception as e:  # noqa: BLE001 - one broken add-on must not cost the report
            sec = Section(_slug(name), name, note=f"section failed: {type(e).__name__}: {e}")
        if sec is not None:
            out.append(sec)
    return out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower() or "section"


def table_html(df, units: str = "us", max_rows: int | None = None) -> str:
    """A DataFrame as an HTML table: ``*Ns`` columns shown in ``units``, long text clipped."""
    if df is None or len(df) == 0:
        return "<p class='muted'>(no rows)</p>"
    shown = scaled(df.head(max_rows) if max_rows else df, units)
    shown = shown.copy()
    for c in shown.columns:
        if shown[c].dtype == object or str(shown[c].dtype).startswith("str"):
            shown[c] = shown[c].map(lambda v: clip_long(v, 90) if isinstance(v, str) else v)
    with pd.option_context("display.float_format", "{:,.3f}".format):
        body = shown.to_html(index=False, escape=True, border=0, na_rep="")
    more = (f"<p class='muted'>first {max_rows} of {len(df)} rows; {cut_note(len(df) - max_rows)}</p>"
            if max_rows and len(df) > max_rows else "")
    return body + more


def table_md(df, units: str = "us", max_rows: int | None = None) -> str:
    """A DataFrame as a GitHub Markdown table (no extra dependency)."""
    if df is None or len(df) == 0:
        return "_(no rows)_\n"
    shown = scaled(df.head(max_rows) if max_rows else df, units)

    def cell(v):
        if isinstance(v, float):
            return "" if v != v else f"{v:,.3f}"
        s = clip_long("" if v is None else str(v), 80)
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(str, shown.columns)) + " |",
             "|" + "|".join("---" for _ in shown.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in shown.itertuples(index=False)]
    if max_rows and len(df) > max_rows:
        lines.append(f"\n_first {max_rows} of {len(df)} rows; {cut_note(len(df) - max_rows)}_")
    return "\n".join(lines) + "\n"


def cut_note(left: int) -> str:
    """What a report table cut to its top rows says of the rest: the console's line."""
    return more_rows(left, "rocpd report --all")


def esc(text) -> str:
    return html.escape(str(text))
