"""The report's "GPU hardware metrics" section (hooked in by name from
rocpd.report.sections.OPTIONAL): for runs with `--gpu-metrics`, the headline per GPU, the
figures per step and per ROCTx range (rocpd.device_metrics.gpu_metrics), and the tensor and DRAM
tracks over time as a figure; none without."""

from __future__ import annotations

from ..analysis.steps import steps_of
from ..report.sections import Section, esc, table_html, table_md
from . import gpu_metrics
from .plots import metrics_over_time

PLOTTED = ("pm_tensor_active", "pm_sm_active", "pm_dram_read", "pm_dram_write")


def report_section(ctx):
    a = ctx.analysis
    src = getattr(a, "gpu_metrics", None)
    if src is None:
        return None
    steps = {(p.guid, p.pid): steps_of(p, a.step_name) for p in a.processes} if a.step_name else {}
    per_step = src.table(a.processes, "step", steps)
    ranges = src.table(a.processes, "range")
    what = f"per {a.step_name} step" if a.step_name else "over the run"
    heads = [f"{proc} GPU {gpu}, {what}: {r['headline']}"
             for (proc, gpu), r in gpu_metrics.run_headline(per_step).items()]
    keys = {k for found in src.tracks.values() for k in found}
    plotted = [k for k in PLOTTED if k in keys]
    top = ctx.top
    html = ("".join(f"<p>{esc(h)}</p>" for h in heads)
            + f"<h3>Per step</h3>{table_html(per_step, max_rows=top)}"
            + f"<h3>Per ROCTx range</h3>{table_html(ranges, max_rows=top)}")
    md = ("\n\n".join(heads) + f"\n\n**Per step**\n\n{table_md(per_step, max_rows=top)}\n"
          f"**Per ROCTx range**\n\n{table_md(ranges, max_rows=top)}\n")
    figures = {"gpu_metrics": lambda: metrics_over_time(ctx.db, plotted)} if plotted else {}
    return Section("gpu-metrics", "GPU hardware metrics: tensor pipes, SMs and DRAM over time",
                   html=html, markdown=md, figures=figures)
