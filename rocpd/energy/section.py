"""The report's "Energy" section (hooked in by name from rocpd.report.sections.OPTIONAL, as the
other sections that live beside their analysis): joules per step and per ROCTx range and the
GPUs' idle share, for databases with energy counter or power samples; none without."""

from __future__ import annotations

from ..report.sections import Section, esc, table_html, table_md
from .tables import IDLE, frame


def report_section(ctx):
    """`rocpd report`: energy per step, per range, and the idle share of the run's energy."""
    a = ctx.analysis
    if not getattr(a, "meters", None):
        return None
    steps, ranges, kernels = (frame(a.processes, a.meters, by, a.step_name)
                              for by in ("step", "range", "kernel"))
    idle = kernels[kernels["kernel"] == IDLE]
    total = kernels["Joules"].sum()
    share = float(idle["Joules"].sum()) / total if total > 0 else 0.0
    head = (f"{total:,.1f} J over the GPUs' run; {share:.0%} of it while no kernel or copy ran "
            f"(idle). Meters: {'; '.join(steps.attrs.get('meters', []))}.")
    rules = " ".join(steps.attrs.get("rules", []) + kernels.attrs.get("rules", [])[:1])
    top = ctx.top
    html = (f"<p>{esc(head)}</p><h3>Per step</h3>{table_html(steps, max_rows=top)}"
            f"<h3>Per ROCTx range</h3>{table_html(ranges, max_rows=top)}"
            f"<p class='muted'>{esc(rules)}</p>")
    md = (f"{head}\n\n**Per step**\n\n{table_md(steps, max_rows=top)}\n**Per ROCTx range**\n\n"
          f"{table_md(ranges, max_rows=top)}\n_{rules}_\n")
    return Section("energy", "Energy: joules per step and per ROCTx range", html=html,
                   markdown=md)
