"""The report's "PC samples" section: the top kernels by PC samples and the hottest one's source
by line (hooked in by name from rocpd.report.sections.OPTIONAL, as the other sections that live
beside their analysis)."""

from __future__ import annotations

from ..report.sections import Section, esc
from . import has_pc_samples, top_kernels
from .source import listing, summary_text


def report_section(ctx):
    """`rocpd report`: the top kernels by PC samples and the hottest one's source by line."""
    if not has_pc_samples(ctx.db):
        return None
    head = summary_text(ctx.db, top=ctx.top)
    kern = top_kernels(ctx.db, limit=1)
    body = listing(ctx.db, kern["name"].iloc[0]) if not kern.empty else ""
    text = head + "\n" + body
    return Section("pc-samples", "PC samples: where inside the kernels the time goes",
                   html=f"<pre>{esc(text)}</pre>", markdown=f"```text\n{text}```\n")
