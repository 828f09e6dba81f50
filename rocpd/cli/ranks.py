"""rocpd ranks DB...: the cross-rank view of a multi-rank run (one database per rank, as torchrun,
srun or mpirun under ``rocprof run`` leave them): step times per rank from a ROCTx range, the
slowest ranks and by how much, compute vs collectives (NCCL/RCCL kernels), kernel-time skew."""

from __future__ import annotations

from ..collectives import text as collectives_text
from ..errors import RocpdError
from ..io.output_file import open_output
from . import (
    add_command,
    add_dask_options,
    add_inputs,
    add_top,
    add_units,
    connect_for,
    inputs_of,
    top_of,
)
from .written import wrote

EXAMPLES = """
rocpd ranks RANKS/                         # step times, slowest ranks, collectives vs compute, skew
rocpd ranks RANKS/ --plot ranks.png --dask   # on a local Dask cluster, and the ranks x steps heat map
rocpd ranks RANKS/ --range train_step --skip-steps 2 --csv out/ranks
"""


def add_parser(sub) -> None:
    p = add_command(sub, "ranks", "cross-rank view: step times, stragglers, collectives, skew",
                    EXAMPLES)
    add_inputs(p)
    p.add_argument("--range", dest="range_name", metavar="NAME",
                   help="ROCTx range that marks one step (default: detected, the repeating range"
                        " nested least deep); numbered names match as one (\"step 3\" = \"step #\")")
    p.add_argument("--collectives", metavar="REGEX", default=None,
                   help="kernel names that are collectives (Python regex, any case; default:"
                        " nccl|rccl)")
    p.add_argument("--skip-steps", type=int, default=0, metavar="N",
                   help="leave out each rank's first N steps (warm-up)")
    add_top(p, "rows of the slowest-rank and skew tables (--all: every row, every rank)")
    add_units(p, "ms")
    p.add_argument("--all-ranks", action="store_true", help="also print the table of every rank")
    p.add_argument("--plot", metavar="PNG", help="write the ranks x steps heat map (needs matplotlib)")
    p.add_argument("--metric", choices=["compute", "duration", "collective", "kernels"],
                   help="what the heat map shows (default compute per step where steps have"
                        " kernels, else step time)")
    p.add_argument("--csv", metavar="PREFIX", help="also write PREFIX_rank_steps.csv,"
                   " PREFIX_rank_summary.csv and PREFIX_kernel_skew.csv")
    p.add_argument("--strict", action="store_true",
                   help="fail on an unreadable database instead of skipping it with a warning")
    add_dask_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd.ranks import core as ranks

    if args.skip_steps < 0:
        raise RocpdError("--skip-steps must be >= 0")
    top = top_of(args)
    with connect_for(args, inputs_of(args), strict=args.strict) as db:
        rep = ranks.analyze(db, args.range_name, args.collectives or ranks.COLLECTIVE_REGEX,
                            args.skip_steps)

        coll = collectives_text.format_ranks(db, top=top)  # --rccl-trace calls, offsets
    # --all: no table is cut; a rank count is the most rows any of them has.
    print(rep.format(top=len(rep.per_rank) + len(rep.kernel_skew) if top is None else top,
                     units=args.units, all_ranks=args.all_ranks or top is None), end="")
    if coll:
        print("\n" + coll, end="")
    if args.plot:
        from rocpd.ranks.plots import write_png

        metric = None if args.metric is None else (
            "kernels" if args.metric == "kernels" else f"{args.metric}_ns")
        if rep.steps.empty:
            raise RocpdError("--plot: no steps to draw (no repeating ROCTx range; name one with"
                             " --range)")
        wrote(write_png(rep, args.plot, metric))
    if args.csv:
        for stem, df in (("rank_steps", rep.steps), ("rank_summary", rep.per_rank),
                         ("kernel_skew", rep.kernel_skew)):
            path = f"{args.csv}_{stem}.csv"
            with open_output(path, newline="") as fh:
                df.to_csv(fh, index=False)
            wrote(path)
    return 0
