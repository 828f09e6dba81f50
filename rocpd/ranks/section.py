"""The ranks section of ``rocpd report`` (a hook listed in :data:`rocpd.report.sections.OPTIONAL`):
heading, headline, heat map and tables, for two ranks or more. The top of the ranks package: it
runs the analysis on the report's databases."""

from __future__ import annotations

from ..report.sections import Section
from .core import analyze
from .text import html_report


def report_section(db, top: int = 10, **kw) -> str:
    """An HTML section for ``rocpd.report``: heading, headline, heat map, the tables. Empty when
    the databases hold fewer than two ranks (nothing to compare)."""
    rep = db if hasattr(db, "matrix") else analyze(db, **kw)
    if len(rep.per_rank) < 2:
        return ""
    return "<h2>Ranks</h2>\n" + html_report(rep, top=top)


def report_section_for(ctx):
    """The ranks section as `rocpd report` hooks it in (rocpd.report.sections.OPTIONAL): None
    (no section) for a single rank."""
    if len(ctx.analysis.processes) < 2:  # one rank: nothing to compare, nothing to read
        return None
    html = report_section(ctx.db, top=min(ctx.top, 10))
    if not html:
        return None
    return Section("ranks", "Ranks: step times, stragglers, collectives", html=html)
