"""Thin dispatcher: one module per subcommand, each exposing add_parser() and run(args).

argparse builds the parser of a subcommand for its help, its errors and the command lines of
every subcommand but the usual `rocprof run` one, which run_args.py reads straight from the
option table: the parser is built before the profiled program starts (B7)."""

from __future__ import annotations

import importlib
import sys

from rocshared.version import __version__

from .errors import UsageError

SUBCOMMANDS = {
    "run": "profile a Python script or module in-process, or any command (rocprof run -- CMD)",
    "info": "version, Python, and which capture backends are compiled in and live here",
    "avail": "hardware counters of each GPU here, with descriptions (rocprofv3 -L)",
    "peaks": "measure (once, cached) each GPU's empirical bandwidth and FLOP/s peaks",
    "ctl": "start/stop a recording window of a `rocprof run --on-demand` run, or list its processes",
    "attach": "record a running process not started by rocprof (sys.remote_exec, ptrace, or "
              "read-only sampling)",
    "completion": "print the shell completion script for rocprof and rocpd (bash or zsh)",
}

EXAMPLES = (
    "rocprof run train.py --epochs 1       # profile a script; the database path is printed",
    "rocprof run -S -- python3 train.py    # any command; summary tables at exit",
    "rocprof info                          # which backends work here, and why not",
    "rocpd summary rocprof-output/         # analyse: summary, analyze, report, convert ...",
    'eval "$(rocprof completion bash)"     # tab completion for rocprof and rocpd',
)


def build_parser(only: str | None = None):
    """The whole command line; with `only` (a subcommand given), that subcommand's parser alone
    (`rocprof run` builds and imports nothing of `info`, `completion`, ...: every profiled run
    builds its parser before the program starts). Without, every subcommand, for the top
    level's help and errors."""
    from .help_text import Formatter, Parser, epilog

    parser = Parser(prog="rocprof", formatter_class=Formatter,
                    description=epilog("Python-first GPU profiler writing rocpd databases "
                                       "(ROCm's rocprofv3 format). `rocprof COMMAND --help` "
                                       "describes each command, with examples."),
                    epilog=epilog(examples=EXAMPLES))
    parser.add_argument("--version", action="version", version=f"rocprof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, help_text in SUBCOMMANDS.items():
        if only is None or name == only:
            p = sub.add_parser(name, help=help_text, description=help_text,
                               formatter_class=Formatter)
            importlib.import_module(f".{name}", __name__).add_parser(p)
    return parser


def _subparser(parser, name: str):
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def dispatch(argv: list[str]) -> int:
    from .. import start_up

    start_up.begin()  # the collector off until the program runs (start_up.py)
    try:
        return _dispatch(argv)
    finally:
        start_up.program_starts()


def _dispatch(argv: list[str]) -> int:
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    try:
        args = target = None
        if command == "run":  # the target's argv is not ours to parse
            from .run import split_argv
            from .run_args import namespace

            own, target = split_argv(argv[1:])
            argv = ["run", *own]
            args = namespace(own)
        if args is None:
            args = _parsed(argv, command)
            if args is None:  # bare `rocprof`: its help, and success, as bare `rocpd` (and pip)
                return 0
        if target is not None:
            args.target = target
            args.own_argv = argv[1:]
        module = importlib.import_module(f".{args.command}", __name__)
        return module.run(args)
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    except BrokenPipeError:  # `rocprof info | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parsed(argv: list[str], command: str | None):
    """argparse's namespace of the command line (UsageError for a bad one); None when no
    subcommand was given (the top level's help printed)."""
    parser = build_parser(only=command)
    args, unknown = parser.parse_known_args(argv)
    if unknown and hasattr(args, "words") and not any(u.startswith("-") for u in unknown):
        # Words after options (`ctl start --duration 2s DIR`): argparse ends a positional
        # list at the first option.
        args.words += unknown
        unknown = []
    if unknown:  # said by the subcommand that was given them, pointing at its own --help
        owner = _subparser(parser, args.command) if args.command else parser
        owner.error(_unrecognized(owner, unknown))
    if args.command is None:
        parser.print_help()
        return None
    return args


def _unrecognized(parser, unknown: list[str]) -> str:
    """argparse's message, plus the nearest option name for a misspelt one."""
    import argparse
    import difflib

    message = f"unrecognized arguments: {' '.join(unknown)}"
    first = unknown[0].split("=", 1)[0]
    if first.startswith("-"):
        names = [s for a in parser._actions if a.help != argparse.SUPPRESS for s in a.option_strings]
        close = difflib.get_close_matches(first, names, n=1, cutoff=0.8)
        if close:
            message += f"; did you mean {close[0]}?"
    return message
