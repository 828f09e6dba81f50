"""``rocpd`` command line: a thin dispatcher; each subcommand is one module with
``add_parser(subparsers)`` and ``run(args) -> int``. Every error is one line and a non-zero exit."""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys

from .. import progress, regex
from ..errors import RocpdError

SUBCOMMANDS = ("summary", "query", "convert", "compare", "diff", "merge", "package", "samples", "report",
               "analyze", "plot", "ranks", "sol")
# ROCm's defaults for -d/--output-path and -o/--output-file (environment first, as ROCm reads them).
DEFAULT_OUTPUT_PATH = "./rocpd-output-data"
DEFAULT_OUTPUT_FILE = "out"


def add_inputs(p: argparse.ArgumentParser, help: str = "files, globs, directories, package index"
               " files (index.yaml) or .rpdb folders") -> None:
    """Databases as positional arguments (ours) and/or after -i/--input (ROCm's)."""
    p.add_argument("databases", nargs="*", help=help)
    p.add_argument("-i", "--input", nargs="+", action="extend", default=[], metavar="INPUT",
                   help="input databases, as ROCm's rocpd takes them (may be combined with the"
                        " positional ones)")


def inputs_of(args) -> list[str]:
    dbs = [*getattr(args, "databases", []), *getattr(args, "input", [])]
    if not dbs:
        raise RocpdError(f"rocpd {args.command}: no database given; name one or more after the"
                         " subcommand or after -i/--input")
    return dbs


def add_output_naming(p: argparse.ArgumentParser, file_help: str) -> None:
    """ROCm's output naming: files go to OUTPUT_PATH/OUTPUT_FILE_<name>.<ext>."""
    p.add_argument("-d", "--output-path", metavar="OUTPUT_PATH",
                   help=f"folder for the output files (ROCm's naming; default {DEFAULT_OUTPUT_PATH},"
                        " or $ROCPD_OUTPUT_PATH)")
    p.add_argument("-o", "--output-file", "--output", dest="output_file", metavar="OUTPUT_FILE",
                   help=file_help)


def rocm_naming(args) -> bool:
    """Outputs are named ROCm's way (OUTPUT_PATH/OUTPUT_FILE_...) when the command is in ROCm's
    form: -i/--input or -d/--output-path given, or no -o; positional databases with -o keep ours
    (-o is the output itself)."""
    return bool(getattr(args, "input", None) or args.output_path or args.output_file is None)


def output_naming(args, default_file: str = DEFAULT_OUTPUT_FILE) -> tuple[str, str]:
    """(folder, base name) for ROCm's naming, from -d/-o or ROCm's environment and defaults."""
    import os

    path = args.output_path or os.environ.get("ROCPD_OUTPUT_PATH", DEFAULT_OUTPUT_PATH)
    name = args.output_file if args.output_file is not None else \
        os.environ.get("ROCPD_OUTPUT_NAME", default_file)
    return os.path.expanduser(path), name


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
    add_time_window_options(p)


def add_time_window_options(p: argparse.ArgumentParser) -> None:
    from ..time_window import parse_inclusive

    g = p.add_argument_group("time window (ROCm's options)")
    s = g.add_mutually_exclusive_group()
    s.add_argument("--start", help="window start: percent of the run (e.g. 50%%) or timestamp in ns")
    s.add_argument("--start-marker", metavar="NAME", help="window starts where ROCTx marker NAME starts")
    e = g.add_mutually_exclusive_group()
    e.add_argument("--end", help="window end: percent of the run (e.g. 75%%) or timestamp in ns")
    e.add_argument("--end-marker", metavar="NAME", help="window ends where ROCTx marker NAME ends")
    g.add_argument("--inclusive", type=parse_inclusive, metavar="BOOL",
                   help="True (default): keep records overlapping the window; False: only records"
                        " wholly inside it")


def add_dask_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Dask (pip install 'rocprof[dask]')")
    g.add_argument("--dask", action="store_true",
                   help="compute on Dask workers, one task per database: a local cluster, or the"
                        " scheduler at $DASK_SCHEDULER_ADDRESS when set")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="use the running Dask scheduler at ADDRESS (e.g. tcp://head:8786); implies"
                        " --dask")
    g.add_argument("--dask-workers", type=int, metavar="N",
                   help="worker processes of the local cluster (default: usable cores)")


def connect_for(args, paths, strict: bool = False):
    """rocpd.connect for a subcommand with add_dask_options: local unless --dask/--scheduler."""
    import os

    import rocpd

    dask = args.scheduler or (True if args.dask else None)
    if dask is None and args.dask_workers is not None:
        raise RocpdError("--dask-workers needs --dask")
    if args.dask_workers is not None and (args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")):
        raise RocpdError("--dask-workers sizes a local cluster; a running scheduler"
                         " (--scheduler, DASK_SCHEDULER_ADDRESS) has the workers it has")
    if args.dask_workers is not None and args.dask_workers < 1:
        raise RocpdError("--dask-workers must be at least 1")
    return rocpd.connect(*paths, strict=strict, dask=dask, workers=args.dask_workers)


def _kernel_regex(pattern: str) -> str:
    """argparse type: the pattern itself, refused at parse time with rocpd.regex's one line."""
    try:
        regex.compile(pattern).close()
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return pattern


def filters_of(args) -> dict:
    out = {}
    for k in ("window", "pct", "between", "include", "exclude", "pid", "rank",
              "start", "end", "start_marker", "end_marker", "inclusive"):
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


def _spawn_safe_main() -> None:
    """A console script without an ``if __name__ == "__main__"`` guard (the Makefile's launchers,
    some installers) would run again in every process that multiprocessing spawns, e.g. the
    workers of ``--dask``'s local cluster. Named as the module ``rocpd.__main__`` (what ``python -m
    rocpd`` gives), the script is left alone by spawn: the workers need nothing from it."""
    import importlib.util

    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("rocpd.__main__")


def main(argv=None) -> int:
    _spawn_safe_main()
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
