"""rocpd energy DB... [--by step|range|line|kernel]: joules per step, per ROCTx range, per launch
line or per kernel (with the GPU's idle as its own row), from the energy counter or power
samples of `rocprof run --energy` (rocpd.energy)."""

from __future__ import annotations

import rocpd

from ..energy import BY, energy
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
rocpd energy OUT/host/123_results.db                    # joules per step
rocpd energy OUT/ --by range                            # per ROCTx range
rocpd energy OUT/ --by kernel --all                     # per kernel, and the GPU's idle
rocpd energy OUT/ --by line --units-per-step 4096       # J per token at 4096 tokens per step
"""


def add_parser(sub) -> None:
    p = add_command(sub, "energy", "joules per step, ROCTx range, launch line or kernel "
                    "(rocprof run --energy)", EXAMPLES)
    add_inputs(p)
    p.add_argument("--by", default="step", choices=BY, help="what a row is")
    add_step_options(p)
    p.add_argument("--units-per-step", type=float, metavar="N",
                   help="tokens or samples per step: adds joules per unit")
    p.add_argument("--csv", metavar="FILE", help="also write the whole table as CSV")
    add_top(p)
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    top = top_of(args)
    with rocpd.connect(*inputs_of(args)) as db:
        df = energy(db, by=args.by, step=step_of(args),
                    units_per_step=args.units_per_step, **filters_of(args))
    print(header(df))
    shown = df.head(top) if top else df
    print(text_table(shown) if len(shown) else "(no rows)")
    if top and len(df) > top:
        print(more_rows(len(df) - top))
    for rule in df.attrs.get("rules", []):
        print(f"note: {rule}")
    if args.csv:
        with open_output(args.csv, newline="") as fh:
            df.to_csv(fh, index=False)
        wrote(args.csv)
    return 0


def header(df) -> str:
    """Which meters the figures rest on and the step range."""
    step = df.attrs.get("step")
    lines = [f"rocpd energy by {df.attrs.get('by')}: " + "; ".join(df.attrs.get("meters", []))]
    if df.attrs.get("by") == "step":
        lines.append(f"step range: '{step}'" if step else "step range: none (the whole run is one step)")
    return "\n".join(lines)
