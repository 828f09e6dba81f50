"""``rocpd`` command line: a thin dispatcher; each subcommand is one module with
``add_parser(subparsers)`` and ``run(args) -> int``. Every error is one line and a non-zero exit."""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys

from .. import progress, regex
from ..errors import RocpdError

SUBCOMMANDS = ("summary", "query", "convert", "compare", "merge", "samples", "report")


def add_filter_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters")
    g.add_argument("--window", nargs=2, type=int, metavar=("T0", "T1"),
                   help="ns from the start of the run; records starting in [T0, T1)")
    g.add_argument("--pct", nargs=2, type=float, metavar=("P0", "P1"), help="percent of the run")
    g.add_argument("--between", nargs=2, metavar=("A", "B"), help="from ROCTx range A to range B")
    g.add_argument("--include", metavar="REGEX", type=_kernel_regex,
                   help="keep kernels whose name matches (POSIX extended regex, as in capture)")
    g.add_argument("--exclude", metavar="REGEX", type=_kernel_regex,
                   help="drop kernels whose name matches (POSIX extended regex, as in capture)")
    g.add_argument("--pid", type=int, action="append", help="only this process (repeatable)")
    g.add_argument("--rank", type=int, action="append", help="only this rank (repeatable)")


def _kernel_regex(pattern: str) -> str:
    """argparse type: the pattern itself, refused at parse time with rocpd.regex's one line."""
    try:
        regex.compile(pattern).close()
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return pattern


def filters_of(args) -> dict:
    out = {}
    for k in ("window", "pct", "between", "include", "exclude", "pid", "rank"):
        v = getattr(args, k, None)
        if v is not None:
            out[k] = tuple(v) if k in ("window", "pct", "between") else v
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rocpd", description="Analyse rocpd profiling databases.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    progress.enable(True)  # drawn only where stderr is a terminal
    try:
        return int(args.run(args) or 0)
    except RocpdError as e:
        print(f"rocpd: error: {e}", file=sys.stderr)
    except (sqlite3.Error, OSError, ValueError, TypeError) as e:
        print(f"rocpd: error: {' '.join(str(e).split())}", file=sys.stderr)
    except KeyboardInterrupt:
        print("rocpd: error: interrupted", file=sys.stderr)
    return 1
