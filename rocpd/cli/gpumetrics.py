"""rocpd gpumetrics DB... [--by step|range|kernel|line]: the GPUs' hardware metrics over time
(`rocprof run --gpu-metrics`: tensor pipes, SM activity, DRAM, L2, PCIe, NVLink) per step, per
ROCTx range, per kernel (by time overlap) or per launch line (rocpd.device_metrics.gpu_metrics)."""

from __future__ import annotations

import rocpd

from ..analysis.activity import load
from ..analysis.steps import step_name, steps_of
from ..device_metrics import gpu_metrics as gm
from ..errors import RocpdError
from ..io.output_file import open_output
from ..textfmt import more_rows
from . import (
    add_command,
    add_filter_options,
    add_inputs,
    add_step_options,
    add_top,
    filters_of,
    inputs_of,
    step_of,
    top_of,
)
from .analyze import text_table
from .written import wrote

EXAMPLES = """
rocpd gpumetrics OUT/host/123_results.db                 # per step: tensor, SM, DRAM ...
rocpd gpumetrics OUT/ --by kernel                        # per kernel, by time overlap
rocpd gpumetrics OUT/ --by range --csv ranges.csv        # per ROCTx range, all rows to CSV
"""


def add_parser(sub) -> None:
    p = add_command(sub, "gpumetrics", "GPU hardware metrics per step, ROCTx range, kernel or "
                    "launch line (rocprof run --gpu-metrics)", EXAMPLES)
    add_inputs(p)
    p.add_argument("--by", default="step", choices=gm.BY, help="what a row is")
    add_step_options(p)
    p.add_argument("--csv", metavar="FILE", help="also write the whole table as CSV")
    add_top(p)
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    top = top_of(args)
    with rocpd.connect(*inputs_of(args)) as db:
        if not gm.tracks(db):
            raise RocpdError(gm.MISSING)
        procs = load(db, **filters_of(args))
        name = step_name(procs, step_of(args))
        steps = {(p.guid, p.pid): steps_of(p, name) for p in procs} if name else {}
        df = gm.table(db, procs, by=args.by, steps=steps)
        head = gm.run_headline(gm.table(db, procs, "step", steps) if args.by != "step" else df)
    what = f"per {name} step" if name else "over the run"
    for (proc, gpu), r in head.items():
        print(f"{proc} GPU {gpu}, {what}: {r['headline']}")
    shown = df.head(top) if top else df
    print(text_table(shown.drop(columns=["pid"]) if len(shown) else shown) if len(shown)
          else "(no rows)")
    if top and len(df) > top:
        print(more_rows(len(df) - top))
    print("Percent figures are of the sample period (DRAM, PCIe, NVLink: of the hardware's peak);"
          " each is the time-weighted mean of the samples over the row's intervals.")
    if args.csv:
        with open_output(args.csv, newline="") as fh:
            df.to_csv(fh, index=False)
        wrote(args.csv)
    return 0
