"""rocpd diff A B: which line, which kernel, which step phase got slower (or appeared) between a
baseline run A and a new run B, per step, with confidence intervals; regressions first."""

from __future__ import annotations

import os

from ..errors import RocpdError
from ..io.output_file import open_output
from . import SIDES, add_command, add_filter_options, add_units, filters_of
from .written import wrote

EXAMPLES = """
rocpd diff base_results.db new_results.db            # the verdict and the tables, regressions first
rocpd diff a1.db a2.db a3.db -- b1.db b2.db b3.db    # several runs per side: host-side changes judged
rocpd diff 'base/*.db' 'new/*.db'                    # ... against their run-to-run spread (or folders)
rocpd diff base/ new/ --units ms --top 20            # folders of rank databases: per rank and the slowest
rocpd diff base.db new.db -o diff.html               # HTML: the tables and the median steps side by side
rocpd diff base.db new.db --format csv -o out/diff   # out/diff_items.csv, out/diff_lines.csv ...
"""
TABLES = ("summary", "items", "lines", "kernels", "phases", "appeared", "ranks", "energy", "memory")


def add_parser(sub) -> None:
    p = add_command(sub, "diff", "which line, kernel and step phase got slower between two runs",
                    EXAMPLES, description=__doc__)
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="A B (baseline, new), or A1 A2 ... -- B1 B2 ...: databases, folders or"
                        " quoted globs; a side's databases are split into runs by time (a run's"
                        " ranks overlap, two runs do not)")
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--step", metavar="RANGE",
                       help="the ROCTx range that marks one step in both runs (default: detected"
                            " in each)")
    steps.add_argument("--no-steps", action="store_true",
                       help="each run as one step (no confidence intervals)")
    p.add_argument("--skip-steps", type=int, default=0, metavar="N",
                   help="leave out each process's first N steps (warm-up; default 0)")
    p.add_argument("--top", type=int, default=10, help="rows per table (default 10; 0: all)")
    p.add_argument("--all", dest="top", action="store_const", const=0,
                   help="every row of every table (--top 0)")
    add_units(p, "us")
    g = p.add_argument_group("statistics")
    g.add_argument("--confidence", type=float, default=0.95,
                   help="level of the bootstrap intervals (default 0.95)")
    g.add_argument("--resamples", type=int, default=2000,
                   help="bootstrap resamples of the steps (default 2000)")
    g.add_argument("--seed", type=int, default=0,
                   help="seed of the resampling: the same seed gives the same intervals (default 0)")
    g.add_argument("--min-change", type=float, default=0.05, metavar="FRACTION",
                   help="a significant change is at least this share of the larger time (default"
                        " 0.05)")
    g.add_argument("--min-share", type=float, default=0.005, metavar="FRACTION",
                   help="... and at least this share of a baseline step (default 0.005)")
    g.add_argument("--min-idle", type=float, default=0.05, metavar="FRACTION",
                   help="a change that is mostly GPU idle (it follows the host's pace, which"
                        " differs between two runs of one program) counts from this share of a"
                        " baseline step (default 0.05)")
    g.add_argument("--trim", type=float, default=0.2, metavar="FRACTION",
                   help="GPU idle per step is a trimmed mean: the steps with the most and with"
                        " the least idle, this share of each run at each end, are left out (the"
                        " host's rare long pauses; 0: plain means; default 0.2); GPU work is the"
                        " mean over all steps")
    g.add_argument("--run-noise", type=float, default=None, metavar="FRACTION",
                   help="with one run per side, a host-side change (GPU idle, host waits, step"
                        " time that GPU work does not explain, all of a run without GPU work)"
                        " counts from this share of a baseline step (default: never with GPU"
                        " work, whose verdict then rests on GPU work; 0.5 without: host-side time"
                        " moves 20-30 %% between runs); with several runs, their spread decides")
    p.add_argument("--format", choices=["text", "csv", "json", "html", "md"],
                   help="text on standard output (default); csv/json: one file per table"
                        " PREFIX_<table>; html/md: a report page (default from -o's extension)")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="the report page (.html/.md) or, for csv/json, the PREFIX of the files")
    p.add_argument("--title", default="rocpd diff", help="title of the report page")
    add_filter_options(p)
    p.set_defaults(run=run)


def sides(words: list) -> tuple:
    """(baseline, new) from the positional words: A B, or A... -- B..."""
    if SIDES in words:
        i = words.index(SIDES)
        a, b = words[:i], words[i + 1:]
        if a and b and SIDES not in b:
            return a, b
        raise RocpdError("rocpd diff A1 A2 ... -- B1 B2 ...: give the baseline's runs, one --,"
                         " then the new runs")
    if len(words) != 2:
        raise RocpdError(f"rocpd diff: {len(words)} runs given; give A B, or several per side"
                         " as A1 A2 ... -- B1 B2 ...")
    return words[0], words[1]


def _format(args) -> str:
    if args.format:
        return args.format
    if args.output and args.output.endswith((".html", ".htm")):
        return "html"
    if args.output and args.output.endswith(".md"):
        return "md"
    return "text"


def run(args) -> int:
    import rocpd.diff

    fmt = _format(args)
    if fmt != "text" and not args.output:
        raise RocpdError(f"rocpd diff --format {fmt} needs -o (a file for html/md, a prefix for"
                         " csv/json)")
    if args.output and fmt == "text":
        raise RocpdError(f"rocpd diff -o {args.output}: give --format csv|json|html|md, or an"
                         " .html/.md file name")
    folder = os.path.dirname(os.path.abspath(args.output)) if args.output else ""
    if folder and not os.path.isdir(folder):
        raise RocpdError(f"rocpd diff -o {args.output}: folder {folder} does not exist; create it"
                         " or choose another -o")
    a, b = sides(args.runs)
    d = rocpd.diff(a, b, step="" if args.no_steps else args.step,
                   skip_steps=args.skip_steps, confidence=args.confidence,
                   resamples=args.resamples, seed=args.seed, min_change=args.min_change,
                   min_share=args.min_share, min_idle=args.min_idle, trim=args.trim, run_noise=args.run_noise,
                   **filters_of(args))
    top = args.top or None
    if fmt == "text":
        print(d.text(top=top or 0, units=args.units))
        return 0
    if fmt in ("html", "md"):
        from rocpd.report import diff as page

        path = page.write(d, args.output, format=fmt, title=args.title, top=args.top or 1_000_000,
                          units=args.units)
        wrote(path)
        print(f"verdict: {d.verdict(args.units)}")
        return 0
    for name in TABLES:
        df = getattr(d, name)
        if df is None or not len(df):
            continue
        path = f"{args.output}_{name}.{fmt}"
        _table(df, path, fmt)
        wrote(path)
    if d.slowest is not None:
        path = f"{args.output}_slowest_items.{fmt}"
        _table(d.slowest.items, path, fmt)
        wrote(path)
    print(f"verdict: {d.verdict(args.units)}")
    return 0


def _table(df, path: str, fmt: str) -> None:
    with open_output(path, newline="") as fh:
        df.to_csv(fh, index=False) if fmt == "csv" else df.to_json(fh, orient="records", indent=1)
