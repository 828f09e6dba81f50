"""Thin dispatcher: one module per subcommand, each exposing add_parser() and run(args)."""

from __future__ import annotations

import argparse
import importlib
import sys

from .._version import __version__

SUBCOMMANDS = {
    "run": "profile a Python script or module in-process, or any command (rocprof run -- CMD)",
    "info": "version, Python, and which capture backends are compiled in and live here",
    "avail": "hardware counters of each GPU here, with descriptions (rocprofv3 -L)",
    "peaks": "measure (once, cached) each GPU's empirical bandwidth and FLOP/s peaks",
}


class UsageError(Exception):
    """Bad command line: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage dump
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rocprof", description="Python-first GPU profiler writing rocpd databases.")
    parser.add_argument("--version", action="version", version=f"rocprof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_text in SUBCOMMANDS.items():
        module = importlib.import_module(f".{name}", __name__)
        module.add_parser(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def dispatch(argv: list[str]) -> int:
    parser = build_parser()
    try:
        target: list[str] | None = None
        if argv and argv[0] == "run":  # the target's argv is not ours to parse
            from .run import split_argv

            own, target = split_argv(argv[1:])
            argv = ["run", *own]
        args = parser.parse_args(argv)
        if target is not None:
            args.target = target
            args.own_argv = argv[1:]
        if args.command is None:
            parser.print_help()
            return 2
        module = importlib.import_module(f".{args.command}", __name__)
        return module.run(args)
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    except BrokenPipeError:  # `rocprof info | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
