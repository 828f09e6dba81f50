"""`rocprof run [options] script.py [args]` / `-m module [args]` / `-- CMD [args]`.

A Python script or module runs in this process with the sys.argv, __main__ and sys.path[0]
of plain `python script.py`; any other command (an executable, `python3 app.py`, `torchrun
...`, a shell script) runs as a child process whose every process records (command.py). The
exit status is passed through. Options are named as rocprofv3's.
"""

from __future__ import annotations

import argparse
import sys

from ..options import Options
from . import UsageError
from .target import run_target

TRACE_HELP = (
    "With no tracing option, rocprof records ROCTx ranges and, where a GPU backend is live, "
    "kernels and memory copies/sets, each with its launching thread and enclosing ROCTx range "
    "(as --kernel-trace --memory-copy-trace). That is the cheapest set that answers which "
    "kernels ran, how long, and from where: the runtime/driver API and synchronisation records "
    "(--runtime-trace, part of --sys-trace) cost far more, since every CUDA call becomes a "
    "record: on an H200 (B2, a small CNN's training step) the default added ~10%, "
    "--sys-trace ~38% and torch.profiler ~33% (benchmarks/RESULTS.md)."
)


# `--sample` with no rate (not a string: argparse would run it through type=int).
DEFAULT_RATE = object()


def add_parser(p) -> None:
    p.epilog = TRACE_HELP
    out = p.add_argument_group("output")
    out.add_argument("-d", "--output-directory", metavar="DIR",
                     help="folder for the database (default rocprof-output/%%hostname%%); "
                          "placeholders %%hostname%% %%pid%% %%ppid%% %%rank%% %%env{VAR}%%")
    out.add_argument("-o", "--output-file", metavar="NAME",
                     help="database name: NAME_results.db (default %%pid%%)")
    out.add_argument("--stats", action="store_true", help="write *_stats.csv beside the database")
    out.add_argument("-S", "--summary", action="store_true", help="print summary tables at exit")
    tr = p.add_argument_group("tracing (rocprofv3 names)")
    tr.add_argument("--marker-trace", action="store_true", help="ROCTx ranges and marks (always on)")
    tr.add_argument("--kernel-trace", action="store_true", help="GPU kernel dispatches")
    tr.add_argument("--memory-copy-trace", action="store_true", help="GPU memory copies and sets")
    tr.add_argument("--memory-allocation-trace", action="store_true", help="GPU allocations and frees")
    tr.add_argument("--runtime-trace", action="store_true", help="GPU runtime and driver API calls and synchronisations (costly: "
                         "every CUDA call becomes a record)")
    tr.add_argument("--sys-trace", action="store_true", help="all of the above")
    tr.add_argument("--kernel-include-regex", metavar="RE", help="keep only kernels matching RE")
    tr.add_argument("--kernel-exclude-regex", metavar="RE", help="drop kernels matching RE")
    tr.add_argument("-T", "--truncate-kernels", action="store_true", help="kernel names without arguments")
    tr.add_argument("-M", "--mangled-kernels", action="store_true", help="keep mangled kernel names")
    sm = p.add_argument_group("sampling")
    sm.add_argument("--sample", nargs="?", const=DEFAULT_RATE, type=int, metavar="HZ",
                    help="call-stack sampling at HZ (without HZ: the core's default rate, "
                         "SamplingSettings.DEFAULT_HZ)")
    sm.add_argument("--sampling-mode", choices=("cpu", "wall"), default="cpu")
    sm.add_argument("--native-stacks", action="store_true", help="merge native frames into stacks")
    out.add_argument("--buffer-budget", type=int, default=2048, metavar="MiB",
                     help="memory the record buffers may grow to in a burst (default 2048); "
                          "past it records are dropped, counted and reported at exit")
    p.add_argument("--no-follow-children", dest="follow_children", action="store_false",
                   help="do not profile Python child processes (subprocess, torchrun ranks); "
                        "fork() children are always followed")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a library module as a script")
    p.add_argument("target", nargs=argparse.REMAINDER,
                   help="script.py [args], or -- CMD [args] for any program (python3 app.py, "
                        "torchrun ..., ./app): each process it starts writes its own database")


# Options of `run` that take a value: needed to find where the target's own argv begins.
_VALUED = {"-d", "--output-directory", "-o", "--output-file", "--kernel-include-regex",
           "--kernel-exclude-regex", "--sampling-mode", "--buffer-budget"}


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split `run` arguments into rocprof's own and the target's, as `python` does: the
    target starts at the script, after `-m MODULE`, or after `--`. Everything from there on
    belongs to the target, even when it looks like a rocprof option."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[:i], argv[i:]
        if a == "-m":
            return argv[: i + 2], argv[i + 2:]
        if not a.startswith("-") or a == "-":
            return argv[:i], argv[i:]
        if a in _VALUED:
            i += 1
        elif a == "--sample" and i + 1 < len(argv) and argv[i + 1].isdigit():
            i += 1
        i += 1
    return argv, []


def options_from(args) -> Options:
    o = Options(output_dir=args.output_directory, output_file=args.output_file,
                stats=args.stats, summary=args.summary,
                kernel_include_regex=args.kernel_include_regex,
                kernel_exclude_regex=args.kernel_exclude_regex,
                truncate_kernels=args.truncate_kernels, mangled_kernels=args.mangled_kernels,
                sample=args.sample, sampling_mode=args.sampling_mode,
                native_stacks=args.native_stacks, follow_children=args.follow_children,
                buffer_budget_mb=args.buffer_budget)
    o.kernel_trace = args.kernel_trace
    o.memory_copy_trace = args.memory_copy_trace
    o.memory_allocation_trace = args.memory_allocation_trace
    o.runtime_trace = args.runtime_trace
    if args.sys_trace:
        o.sys_trace()
    elif not (o.kernel_trace or o.memory_copy_trace or o.memory_allocation_trace or o.runtime_trace):
        # The default, stated in --help: what a user of nsys/torch.profiler expects to see.
        o.kernel_trace = o.memory_copy_trace = True
        o.default_gpu = True  # notes about missing GPU backends stay quiet for the default
    if o.sample is DEFAULT_RATE:  # --sample without a rate: the one default, stated in the core
        from .. import _core

        o.sample = _core.SamplingSettings.DEFAULT_HZ
    if o.sample is not None and not (1 <= o.sample <= 100_000):
        raise UsageError(f"rocprof run: --sample must be between 1 and 100000 Hz, not {o.sample}")
    for flag in ("kernel_include_regex", "kernel_exclude_regex"):
        pattern = getattr(o, flag)
        if pattern:
            # The engine capture applies (glibc POSIX ERE), not Python's re: a pattern that
            # passes here means the same thing there and in rocpd's filters.
            from rocpd import regex

            try:
                regex.compile(pattern)
            except ValueError as e:
                raise UsageError(f"rocprof run: --{flag.replace('_', '-')}: {e}") from None
    return o


def run(args) -> int:
    target = list(args.target)
    if target and target[0] == "--":
        target = target[1:]
    if args.module is None and not target:
        raise UsageError("rocprof run: nothing to run: give a script (rocprof run script.py) or -m module")
    options = options_from(args)
    if args.module is None:
        from .command import classify, run_command

        try:
            kind, _ = classify(target[0])
        except FileNotFoundError as e:
            print(e, file=sys.stderr)
            return 2
        if kind == "command":
            return run_command(options, target)
    return run_target(options, script=None if args.module else target[0], module=args.module,
                      argv=target)
