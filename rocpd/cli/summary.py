"""rocpd summary DB...: rocprofv3-style statistics per domain, with dropped-record counts.

ROCm's form (any of -i, -f, --domain-summary, --summary-by-rank, --region-categories, -d, -o) gives
ROCm's tables and files instead (:mod:`rocpd.summary.rocm`), e.g. ``rocpd summary -i a.db b.db
--summary-by-rank -f csv`` -> rocpd-output-data/kernels_summary.csv ...

Console tables are bounded in both forms: ``--top N`` rows per table (per process/rank/host),
then "… and K more (use --all)". Hidden older spellings, kept working: ``--csv PREFIX``
(rocprofv3's PREFIX_<domain>_stats.csv files, as `rocprof run --stats` writes; ``-f csv`` is
ROCm's), ``--window``/``--pct`` (see rocpd.io.filters). ``--by rank`` stays visible: ROCm's
``--summary-by-rank`` means the process, and ROCm has no grouping by rank or host."""

from __future__ import annotations

import argparse

from ..summary.rocm_formats import FORMATS
from . import (
    add_command,
    add_dask_options,
    add_filter_options,
    add_inputs,
    add_output_naming,
    add_top,
    add_units,
    connect_for,
    filters_of,
    inputs_of,
    output_naming,
    top_of,
)
from .written import wrote

EXAMPLES = """
rocpd summary OUT/*.db                     # kernels, copies, API domains, ROCTx ranges
rocpd summary OUT/run1_results.db --top 5 --units ms
rocpd summary OUT/metrics_results.db --domain device_metrics
rocpd summary -i db1.db db2.db --summary-by-rank --format csv   # ROCm's tables and files
rocpd summary -i db0.db --region-categories HIP MARKERS --domain-summary --format html
"""


def add_parser(sub) -> None:
    p = add_command(sub, "summary", "per-domain statistics (kernels, copies, APIs, ROCTx)", EXAMPLES)
    add_inputs(p)
    add_top(p, "longest entries of each table (per process with --summary-by-rank)")
    add_units(p, "ns")
    p.add_argument("--by", choices=["pid", "rank", "host", "module"],
                   help="one table per process, rank (the recorded RANK, SLURM_PROCID, ...) or"
                        " host; module: GPU time per nn.Module (a --module-trace run); ROCm's"
                        " --summary-by-rank instead adds ROCm's tables per process")
    p.add_argument("--domain", action="append", dest="domains", metavar="TABLE",
                   help="only this table, repeatable (kernel, memory_copy, marker_api, hip_api,"
                        " domain, device_metrics, counter_collection, ...; ROCm's category names"
                        " such as KERNEL_DISPATCH too); a name that is none of them is an error")
    p.add_argument("--busy", action="store_true", help="also print GPU busy percent per agent")
    p.add_argument("--csv", metavar="PREFIX", help=argparse.SUPPRESS)
    p.add_argument("--strict", action="store_true",
                   help="fail on an unreadable database instead of skipping it with a warning")
    g = p.add_argument_group("ROCm's summary options (ROCm's tables and output files)")
    g.add_argument("-f", "--format", nargs="+", type=str.lower, choices=FORMATS, metavar="FORMAT",
                   help=f"one or more of {', '.join(FORMATS)}; files go to OUTPUT_PATH (default:"
                        " console)")
    g.add_argument("--domain-summary", action="store_true", help="add the per-domain table")
    g.add_argument("--summary-by-rank", action="store_true",
                   help="add each table per process (ProcessID, Hostname)")
    g.add_argument("--region-categories", nargs="+", metavar="CATEGORY",
                   help="only these region families (HIP HSA MARKERS KERNEL ...); NONE: no regions"
                        " (default: all)")
    add_output_naming(p, "base name of the output files: OUTPUT_FILE_kernels_summary.csv ..."
                      " (default none: kernels_summary.csv, as ROCm's)")
    add_filter_options(p)
    add_dask_options(p)
    p.set_defaults(run=run)


def _rocm_form(args) -> bool:
    return bool(args.input or args.format or args.domain_summary or args.summary_by_rank
                or args.region_categories or args.output_path or args.output_file is not None)


def _prefetch(db, args, flt: dict) -> None:
    """Start the kernel table's read on threads before the imports below (pandas and the tables'
    code, ~0.4 s): the first and longest step of both forms' kernel tables, where they have one."""
    rocm = _rocm_form(args)
    if args.domains or args.by == "module" or (rocm and args.region_categories):
        return
    from ..io.filters import Filter, resolve
    from ..summary import fastagg

    where, params = resolve(db, Filter.of(flt))
    fastagg.prefetch(db, where, params, by_pid=args.by == "pid" and not rocm)


def run(args) -> int:
    top = top_of(args)
    flt = filters_of(args)
    with connect_for(args, inputs_of(args), strict=args.strict) as db:
        _prefetch(db, args, flt)
        from ..summary.core import cached

        with cached():
            return _summarise(db, args, top, flt)


def _summarise(db, args, top, flt: dict) -> int:
    from ..analysis import bounded
    from ..summary import rocm as rocm_summary
    from ..summary import stats

    if _rocm_form(args):
        tabs = rocm_summary.tables(db, args.domain_summary, args.summary_by_rank,
                                   args.region_categories, **flt)
        folder, name = output_naming(args, default_file="")  # ROCm: kernels_summary.csv
        formats = list(dict.fromkeys(args.format or ["console"]))
        for path in rocm_summary.write(tabs, formats, folder, name, top=top):
            wrote(path)
        if "console" in formats:
            print("\n" + stats.format_drops(db), end="")
        return 0
    if args.by == "module":
        from rocpd.summary import by_module

        print(by_module.format_table(db, top=top, units=args.units, **flt), end="")
        return 0
    print(stats.format_summary(db, top=top, units=args.units, by=args.by,
                               domains=args.domains, **flt), end="")
    for line in bounded.describe(db):  # rocprof run --max-size: which steps were summarised
        print(line)
    if args.busy:
        busy = db.busy(**flt)
        cols = ["pid", "agent_id", "agent_abs_index", "type", "GpuTime", "WallTime", "BusyPercent"]
        print("\n== GPU BUSY ==\n" + (busy[cols].to_string(index=False) if len(busy) else "(no GPU records)"))
    if args.csv:
        for path in stats.write_stats_csv(db, args.csv, **flt):
            wrote(path)
    return 0
