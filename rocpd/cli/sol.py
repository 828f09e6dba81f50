"""rocpd sol DB...: speed of light per kernel and for the run (FLOP/s by precision, DRAM and L2
bandwidth, occupancy, SM throughput: value, peak, % of peak) from a `rocprof run --sol` (or
--pmc) profile; --roofline writes the roofline PNG."""

from __future__ import annotations

import rocpd

from ..errors import RocpdError
from ..io.output_file import open_output
from . import add_command, add_filter_options, add_inputs, add_top, filters_of, inputs_of, top_of
from .written import wrote

EXAMPLES = """
rocpd sol out/sol_results.db --roofline roofline.png
rocpd sol out/sol_results.db --top 10 --json sol.json
rocpd sol out/sol_results.db --peaks peaks.json
"""


def add_parser(sub) -> None:
    p = add_command(sub, "sol", "speed of light and roofline from hardware counters (--sol)",
                    EXAMPLES)
    add_inputs(p)
    add_top(p, "longest kernels")
    p.add_argument("--roofline", metavar="PNG", help="also write the roofline chart to PNG")
    p.add_argument("--peaks", metavar="JSON",
                   help="empirical peaks to compare with (the format `rocprof peaks --json` writes);"
                        " default: the run's own, else ~/.cache/rocprof/peaks.json")
    p.add_argument("--json", metavar="FILE", help="also write the tables as JSON ('-': stdout only)")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import json
    import os

    from rocpd.counters import pmc, roofline, sol, sol_format

    if args.peaks and not os.path.isfile(args.peaks):
        raise RocpdError(f"rocpd sol: --peaks {args.peaks}: no such file")
    with rocpd.connect(*inputs_of(args)) as db:
        if not pmc.has_counters(db):
            raise RocpdError(f"rocpd sol: {pmc.why_no_counters(db)}")
        res = sol.compute(db, peaks_file=args.peaks, **filters_of(args))
        if args.json == "-":
            print(json.dumps(sol_format.to_json(res), indent=2))
            return 0
        print(sol_format.format_sol(res, top=top_of(args)), end="")
        if args.json:
            with open_output(args.json) as fh:
                json.dump(sol_format.to_json(res), fh, indent=2)
            wrote(args.json)
        if args.roofline:
            wrote(roofline.write_png(res, args.roofline))
    return 0
