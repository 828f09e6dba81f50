"""rocpd report DB... -o report.html: one self-contained HTML page — findings first, then an
interactive timeline, per-step charts and the tables — with the Perfetto trace written beside it;
``--format md`` (or -o report.md) writes Markdown with PNG plots."""

from __future__ import annotations

import os
import sys

import rocpd

from . import (
    add_command,
    add_filter_options,
    add_step_options,
    add_top,
    add_units,
    filters_of,
    step_of,
    top_of,
)
from .written import wrote

EXAMPLES = """
rocpd report OUT/run1_results.db -o report.html  # the page (and report.pftrace beside it)
rocpd report OUT/run1_results.db -o report.md    # Markdown + PNG plots in report_files/
rocpd report RANKS/ -o ranks.html --no-perfetto --top 10
"""


def add_parser(sub) -> None:
    p = add_command(sub, "report", "the guided report: findings, interactive timeline, per-step"
                    " charts and tables (HTML, or Markdown with PNG plots)", EXAMPLES)
    p.add_argument("databases", nargs="+", help="files, globs or directories")
    p.add_argument("-o", "--output", required=True, help="report file (.html, or .md for Markdown)")
    p.add_argument("--format", choices=["html", "md"],
                   help="html or md (default: from the -o extension, html for any other)")
    p.add_argument("--plots", metavar="DIR",
                   help="also write the figures as PNG files into DIR (Markdown: default "
                        "<report>_files)")
    p.add_argument("--no-perfetto", action="store_true",
                   help="do not write the Perfetto trace (<report>.pftrace) beside the report")
    add_step_options(p, "analyse the whole run as one")
    p.add_argument("--max-slices", type=int, default=400_000,
                   help="most slices drawn on the timeline (the Perfetto trace has all)")
    add_top(p)
    add_units(p, "us")
    p.add_argument("--title", default="rocpd report", help="the page's title")
    p.add_argument("--baseline", metavar="RUN",
                   help="a baseline run (database, folder or quoted glob): the report also shows"
                        " what changed against it, as rocpd diff RUN DATABASES does")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd import report
    from rocpd.io.output_file import refuse_folder

    refuse_folder(args.output)  # before the trace beside it is written
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise rocpd.RocpdError(f"rocpd report: folder {out_dir} does not exist; create it or choose"
                               " another -o")
    notes: list[str] = []
    top = top_of(args)
    with rocpd.connect(*args.databases) as db:
        # --all: the report's tables take a row count; no table has sys.maxsize rows.
        paths = report.write_files(db, args.output, format=args.format, plots=args.plots,
                             perfetto=not args.no_perfetto, notes=notes,
                             top=sys.maxsize if top is None else top, units=args.units,
                             title=args.title, step=step_of(args),
                             max_slices=args.max_slices, baseline=args.baseline,
                             **filters_of(args))
    for path in paths:
        wrote(path)
    for note in notes:
        print(f"rocpd report: {note}", file=sys.stderr)
    return 0
