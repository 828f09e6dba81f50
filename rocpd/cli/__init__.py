"""``rocpd`` command line: a thin dispatcher; each subcommand is one module with
``add_parser(subparsers)`` and ``run(args) -> int``. Every error is one line and a non-zero exit.

Parsers are plain argparse (shell completion reads them): :func:`add_command` gives each
subcommand the help layout (every option's default shown, examples in the epilog) and
:class:`Parser` makes a bad option point at that subcommand's ``--help``. Shared option groups
live here, one function per concept."""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys

import rocpd

from .. import progress, regex
from ..errors import RocpdError
from ..io.time_window import parse_inclusive
from ..output_config import format_path
from ..textfmt import TOP_ROWS

SUBCOMMANDS = ("summary", "query", "convert", "compare", "diff", "merge", "package", "samples", "report",
               "pcsamples",
               "analyze", "energy", "gpumetrics", "memory", "plot", "ranks", "sol")
# ROCm's defaults for -d/--output-path and -o/--output-file (environment first, as ROCm reads them).
DEFAULT_OUTPUT_PATH = "./rocpd-output-data"
DEFAULT_OUTPUT_FILE = "out"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples keep their lines; every option with a real default says it, unless its help
    already does (a help that explains the default in words says "default")."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) \
                or action.option_strings == [] or isinstance(action.default, list) and not action.default:
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line naming the (sub)command and pointing at its
    --help (the usage of a command with many options would bury the error)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_args(self, args=None, namespace=None):
        args, extra = self.parse_known_args(args, namespace)
        if extra:
            sub = self._subcommand(args)
            (sub or self).error(f"unrecognized arguments: {' '.join(extra)}")
        return args

    def _subcommand(self, args):
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(getattr(args, "command", None) or "")
        return None


def add_command(sub, name: str, help: str, examples: str, description: str | None = None):
    """A subcommand's parser: our help layout, ``examples`` (one command per line, a comment
    after ``#`` allowed) as its epilog."""
    lines = "\n".join(f"  {line}" if line.strip() else "" for line in examples.strip("\n").splitlines())
    return sub.add_parser(name, help=help, description=description or help,
                          formatter_class=HelpFormatter, epilog=f"examples:\n{lines}")


# rocprofv3's -u/--summary-units spellings, so that `rocprof run -u msec` and `rocpd summary -u
# msec` read alike.
_UNIT_ALIASES = {"nsec": "ns", "usec": "us", "msec": "ms", "sec": "s"}


def _unit(text: str) -> str:
    unit = _UNIT_ALIASES.get(text.lower(), text.lower())
    if unit not in ("ns", "us", "ms", "s"):
        raise argparse.ArgumentTypeError(f"invalid unit {text!r} (choose from ns, us, ms, s; or "
                                         "rocprofv3's nsec, usec, msec, sec)")
    return unit


def add_units(p: argparse.ArgumentParser, default: str) -> None:
    """-u/--units: the time unit of a command's tables."""
    p.add_argument("-u", "--units", default=default, type=_unit, metavar="{ns,us,ms,s}",
                   help=f"time unit of the tables (default {default}; rocprofv3's nsec, usec, "
                        "msec, sec too)")


def add_step_options(p: argparse.ArgumentParser, whole: str = "the whole run is one step") -> None:
    """--step RANGE or --no-steps (`whole` says what that does), the same in every command that
    reads per-step figures; step_of(args) is the value rocpd's functions take."""
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--step", metavar="RANGE",
                       help="the ROCTx range that marks one step (its message, or the message "
                            "without a trailing number); default: detected")
    steps.add_argument("--no-steps", action="store_true", help=whole)


def step_of(args) -> str | None:
    """The step argument of rocpd's functions: "" (no steps), a range, or None (detected)."""
    return "" if args.no_steps else args.step


def add_top(p: argparse.ArgumentParser, what: str = "rows of each table") -> None:
    """--top N and --all, the same in every command that cuts its console tables: N rows of
    each table by default (TOP_ROWS), every row with --all; a cut table says how many rows it
    left out (rocpd.textfmt.more_rows)."""
    p.add_argument("--top", type=int, default=TOP_ROWS, metavar="N", help=f"console tables show N {what}")
    p.add_argument("--all", action="store_true", help="console tables show every row")


def top_of(args) -> int | None:
    """The rows each table shows: None (every row) with --all."""
    if args.all:
        return None
    if args.top < 1:
        raise RocpdError("--top must be at least 1 (--all shows every row)")
    return args.top


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
    """(folder, base name) for ROCm's naming, from -d/-o or ROCm's environment and defaults,
    placeholders expanded (%hostname%, %rank%, %env{VAR}% ...) as everywhere else."""
    import os

    path = args.output_path or os.environ.get("ROCPD_OUTPUT_PATH", DEFAULT_OUTPUT_PATH)
    name = args.output_file if args.output_file is not None else \
        os.environ.get("ROCPD_OUTPUT_NAME", default_file)
    return format_path(path), format_path(name)


def add_kernel_rename(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel-rename", action="store_true",
                   help="name each kernel by the ROCTx range it was launched in (the region a"
                        " capture with --kernel-rename stored, else the innermost range around"
                        " the launch), as ROCm's rocpd does")


def add_filter_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters")
    # Older spellings of --start/--end, kept working: ns from the start of the run / percent of
    # the run, records starting in [T0, T1).
    g.add_argument("--window", nargs=2, type=int, metavar=("T0", "T1"), help=argparse.SUPPRESS)
    g.add_argument("--pct", nargs=2, type=float, metavar=("P0", "P1"), help=argparse.SUPPRESS)
    g.add_argument("--between", nargs=2, metavar=("A", "B"), help="from ROCTx range A to range B")
    g.add_argument("--include", metavar="REGEX", type=_kernel_regex,
                   help="keep kernels whose name matches (POSIX extended regex, as in capture)")
    g.add_argument("--exclude", metavar="REGEX", type=_kernel_regex,
                   help="drop kernels whose name matches (POSIX extended regex, as in capture)")
    g.add_argument("--pid", type=int, action="append", help="only this process (repeatable)")
    g.add_argument("--rank", type=int, action="append", help="only this rank (repeatable)")
    add_time_window_options(p)


def add_time_window_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("time window (ROCm's options)")
    s = g.add_mutually_exclusive_group()
    s.add_argument("--start", help="window start: percent of the run (e.g. 50%%) or timestamp in ns")
    s.add_argument("--start-marker", metavar="NAME", help="window starts where ROCTx marker NAME starts")
    e = g.add_mutually_exclusive_group()
    e.add_argument("--end", help="window end: percent of the run (e.g. 75%%) or timestamp in ns")
    e.add_argument("--end-marker", metavar="NAME", help="window ends where ROCTx marker NAME ends")
    g.add_argument("--inclusive", type=parse_inclusive, metavar="BOOL", default=True,
                   help="True (default): only records wholly inside the window; False: every"
                        " record overlapping it. This is what ROCm's rocpd code does, so counts"
                        " match ROCm's; ROCm's documentation states the two the other way round"
                        " (its True is our False)")


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
        if v is not None and not (k == "inclusive" and v is True):  # True: Filter's default
            out[k] = tuple(v) if k in ("window", "pct", "between") else v
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="rocpd", formatter_class=HelpFormatter,
                    description="Analyse rocpd profiling databases (ours and ROCm rocprofv3's).",
                    epilog="`rocpd COMMAND --help` shows each command's options and examples.")
    parser.add_argument("-v", "--version", action="store_true",
                        help="print the version information and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def version_text() -> str:
    """``rocpd --version``: the version first, then ROCm's other version_info keys."""
    info = rocpd.version_info
    lines = [f"rocpd {info['version']}"]
    lines += [f"  {k:>16}: {v}" for k, v in info.items()
              if k not in ("version", "major", "minor", "patch")]
    return "\n".join(lines)


def _spawn_safe_main() -> None:
    """A console script without an ``if __name__ == "__main__"`` guard (the Makefile's launchers,
    some installers) would run again in every process that multiprocessing spawns, e.g. the
    workers of ``--dask``'s local cluster. Named as the module ``rocpd.__main__`` (what ``python -m
    rocpd`` gives), the script is left alone by spawn: the workers need nothing from it."""
    import importlib.util

    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("rocpd.__main__")


# `rocpd diff A1 A2 -- B1 B2`: argparse drops a "--"; the one between the sides is kept as this
SIDES = "\x00sides"


def diff_argv(argv: list) -> list:
    """``argv`` with the "--" after `diff` (between its two sides) kept as ``SIDES``."""
    if "diff" in argv and "--" in argv[argv.index("diff"):]:
        i = argv.index("--", argv.index("diff"))
        return [*argv[:i], SIDES, *argv[i + 1:]]
    return argv


def main(argv=None) -> int:
    _spawn_safe_main()
    parser = build_parser()
    args = parser.parse_args(diff_argv(sys.argv[1:] if argv is None else list(argv)))
    if args.version:
        print(version_text())
        return 0
    if args.command is None:  # as ROCm's rocpd: the help, and success
        parser.print_help()
        return 0
    progress.enable(True)  # drawn only where stderr is a terminal
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # `rocpd summary DB | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RocpdError as e:
        print(f"rocpd: error: {e}", file=sys.stderr)
    except (sqlite3.Error, OSError, ValueError, TypeError) as e:
        print(f"rocpd: error: {' '.join(str(e).split())}", file=sys.stderr)
    except KeyboardInterrupt:
        print("rocpd: error: interrupted", file=sys.stderr)
    return 1
