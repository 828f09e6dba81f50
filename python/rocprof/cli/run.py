"""`rocprof run [options] script.py [args]` / `-m module [args]` / `-- CMD [args]`.

A Python script or module runs in this process with the sys.argv, __main__ and sys.path[0]
of plain `python script.py`; any other command (an executable, `python3 app.py`, `torchrun
...`, a shell script) runs as a child process whose every process records (command.py). The
exit status is passed through. Options are named as rocprofv3's.
"""

from __future__ import annotations

import os
import sys

from .. import _core, bounded, paths
from .. import option_table as table
from ..options import Options
from ..run_report import SUMMARY_STREAMS, output_formats
from . import rocprofv3_options as v3
from .errors import UsageError
from .target import run_target

# Which options take a value, or an optional [BOOL] (`--sys-trace false`): where the target's
# own argv begins depends on them.
_VALUED = table.names("value")
_BOOLS = table.names("bool")
_RATES = table.names("rate")  # an optional whole number (`--sample 500`)


def add_parser(p) -> None:
    """The argparse parser of `rocprof run` (run_parser.py): built for --help, for errors and
    for the command lines run_args.py leaves to it."""
    from .run_parser import add_parser as declare

    declare(p)


def _is_counter_name(token: str) -> bool:
    """A token after --pmc that names a counter, not the script: no path separator, no .py."""
    import re

    return (re.fullmatch(r"[A-Za-z0-9_.,]+", token) is not None and not token.endswith(".py")
            and not os.path.exists(token))


def _is_format_word(token: str, first: bool) -> bool:
    """A token after -f that is meant as a format: a known one; or, as -f's first value or a
    bare word that names no file or command, a misspelt one, left to argparse to name as an
    invalid choice (taken for the program, it would be called a missing file)."""
    if token in output_formats():
        return True
    if token.startswith("-") or "/" in token or os.path.exists(token):
        return False
    if first:
        return True
    import shutil

    return token.isalnum() and shutil.which(token) is None


def _is_rate_word(token: str) -> bool:
    """A token after a rate option (`--sample [HZ]`) that is meant as its value: a whole number,
    or a word that names no program (no file, no command on PATH, no path, no .py), left to
    argparse to refuse as a bad HZ: taken for the program, `--sample abc -- CMD` would run abc
    or call it a missing file."""
    if token.isdigit():
        return True
    if token.startswith("-") or os.sep in token or token.endswith((".py", ".pyw", ".pyz")) \
            or os.path.exists(token):
        return False
    import shutil

    return shutil.which(token) is None


def _summary_target(path: str | None) -> str | None:
    """--summary-output-file: a path made absolute (the program may change folder), or one of
    rocprofv3's stream names kept as given. A folder (one that exists, or a path ending in a
    separator) is refused before the program runs: the summary is one file."""
    if not path or path.lower() in SUMMARY_STREAMS:
        return path
    from rocpd.io.output_file import names_folder  # light; only when the option is given

    if names_folder(path):
        raise UsageError(f"rocprof run: --summary-output-file {path!r} names a folder; give a "
                         "file name in it")
    return os.path.abspath(path)


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
        elif a in _RATES and i + 1 < len(argv) and _is_rate_word(argv[i + 1]):
            i += 1
        elif a in _BOOLS and i + 1 < len(argv) and v3.is_bool(argv[i + 1]):
            i += 1
        elif a in ("-f", "--output-format"):
            first = i + 1
            while i + 1 < len(argv) and _is_format_word(argv[i + 1], i + 1 == first):
                i += 1
        elif a == "--pmc":  # counter names up to the next option, `--`, or the script
            while i + 1 < len(argv) and _is_counter_name(argv[i + 1]):
                i += 1
        elif a == "--preload":  # libraries up to the next option or `--`
            while i + 1 < len(argv) and not argv[i + 1].startswith("-") and (
                    "/" in argv[i + 1] or ".so" in argv[i + 1]):
                i += 1
        i += 1
    return argv, []


def options_from(args) -> Options:
    o = Options()
    # Every row whose destination is an Options field lands there as parsed; the rows below
    # are those whose field has another name or whose value is converted.
    fields = set(Options.field_names())
    for row in table.OPTIONS:
        if row.dest in fields:
            value = getattr(args, row.dest)
            if value is not None:  # not given: the field's default
                setattr(o, row.dest, value)
    o.output_dir = args.output_directory
    o.redact_text = not args.no_redact
    o.minimum_output_data_kb = args.minimum_output_data
    o.buffer_budget_mb = args.buffer_budget
    try:
        o.max_size = bounded.parse_size(args.max_size) if args.max_size is not None else None
        o.keep = bounded.check_keep(args.keep)
    except ValueError as e:
        raise UsageError(f"rocprof run: {e}") from None
    if o.max_size is None and o.keep != "auto":
        raise UsageError(f"rocprof run: --keep {o.keep} needs --max-size (without it every "
                         "step keeps its records)")
    o.output_formats = list(args.output_format)
    o.summary_units = v3.UNITS[args.summary_units]
    o.summary_output_file = _summary_target(args.summary_output_file)
    o.selected_regions = args.selected_regions or bool(args.collection_period)
    o.collection_periods = list(args.collection_period)
    o.preload = list(args.preload)
    if o.site_filter is not None:
        from ..capture import site_filter

        try:
            site_filter.patterns(o.site_filter)
        except ValueError as e:
            raise UsageError(f"rocprof run: {e}") from None
    if args.sys_trace:
        o.sys_trace()
    if args.pmc or o.sol:
        from rocshared import kernel_metrics as metrics

        try:
            o.pmc, o.counter_aliases = metrics.resolve(args.pmc)
        except ValueError as e:
            raise UsageError(f"rocprof run: {e}") from None
        if o.pmc:
            from .. import counters

            bad = counters.unknown_names(o.pmc)
            if bad:
                raise UsageError(f"rocprof run: --pmc: {bad}")
    # PC sampling: any of its options turns it on.
    pc_opts = (args.pc_sampling_method, args.pc_sampling_unit, args.pc_sampling_interval)
    if args.pc_sampling or any(v is not None for v in pc_opts):
        if args.pc_sampling_interval is not None and args.pc_sampling_interval <= 0:
            raise UsageError("rocprof run: --pc-sampling-interval must be a positive number")
        o.pc_sampling = True
        o.pc_sampling_method = args.pc_sampling_method or "stochastic"
        o.pc_sampling_unit = args.pc_sampling_unit or "cycles"
        o.pc_sampling_interval = args.pc_sampling_interval or 0
    if not any(getattr(o, row.dest) for row in table.gpu_trace_rows()):
        o.trace_gpu_by_default()
    if o.sample is table.DEFAULT_RATE:  # --sample without a rate: the one default, stated in the core
        o.sample = _core.SamplingSettings.DEFAULT_HZ
    if o.process_freq is table.DEFAULT_RATE:
        o.process_freq = _core.MetricsSettings.DEFAULT_HZ
    if o.process_freq is not None:
        top = _core.MetricsSettings.MAX_HZ
        if not (1 <= o.process_freq <= top):
            raise UsageError(f"rocprof run: --process-freq must be between 1 and {top} Hz, not "
                             f"{o.process_freq}")
    for flag in ("gpus", "cpus"):
        value = getattr(o, flag)
        if not _index_list_ok(value):
            raise UsageError(f"rocprof run: --{flag} {value!r}: expected all, none or a list like "
                             "0,2-3")
    if o.sample is not None and not (1 <= o.sample <= 100_000):
        raise UsageError(f"rocprof run: --sample must be between 1 and 100000 Hz, not {o.sample}")
    if o.native_stacks:  # the rule is the sampling backend's (imported only when it may apply)
        from ..capture import sampling

        why = sampling.conflict(o)
        if why:
            raise UsageError(f"rocprof run: {why}")
    if o.minimum_output_data_kb < 0:
        raise UsageError("rocprof run: --minimum-output-data must be 0 or more kilobytes")
    for flag in ("kernel_include_regex", "kernel_exclude_regex", "trace_kernel_include_regex",
                 "trace_kernel_exclude_regex"):
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


def _index_list_ok(text: str) -> bool:
    """--gpus/--cpus syntax, as the core's parse_index_list reads it."""
    if text in ("all", "none"):  # the defaults: no re (with enum) before the program starts
        return True
    import re

    return re.fullmatch(r"\d{1,6}(-\d{1,6})?(,\d{1,6}(-\d{1,6})?)*", text) is not None


def run(args) -> int:
    if args.list_avail:  # rocprofv3 -L: list and exit, whatever else the line says
        from .avail import list_counters

        return list_counters(chip=None, submetrics=False, as_json=False, pattern=None)
    target = list(args.target)
    if target and target[0] == "--":
        target = target[1:]
    if args.input:
        if args.module is not None or not target:
            raise UsageError("rocprof run: --input needs the program after it: rocprof run -i "
                             "FILE -- CMD [args]")
        return v3.run_input_jobs(args.input, _own_without_input(args.own_argv), target)
    if args.module is None and not target:
        raise UsageError("rocprof run: nothing to run: give a script (rocprof run script.py) or -m module")
    options = options_from(args)
    if options.sol:
        from .. import peaks

        options.empirical_peaks, note = peaks.for_run()
        if note and v3.shows_notes(options.log_level):
            print(f"rocprof: {note}", file=sys.stderr)

    paths.TARGET_ARGV[:] = [args.module, *target] if args.module else target
    if args.module is None:
        try:
            kind, _ = classify(target[0])
        except FileNotFoundError as e:
            print(e, file=sys.stderr)
            return 2
        if kind == "command":
            from .command import run_command

            return run_command(options, target)
    return run_target(options, script=None if args.module else target[0], module=args.module,
                      argv=target)


def classify(argv0: str) -> tuple[str, str]:
    """("script", path) for a Python file run in-process, ("command", executable) for a
    program run as a child; raises FileNotFoundError with a one-line message."""
    if os.path.isfile(argv0):
        if argv0.endswith((".py", ".pyw", ".pyz")):
            return "script", argv0
        with open(argv0, "rb") as f:
            head = f.read(4)
        if head == b"\x7fELF" or (head.startswith(b"#!") and os.access(argv0, os.X_OK)):
            return "command", argv0
        return "script", argv0  # a Python file without the suffix: python would run it too
    if os.path.isdir(argv0):  # as python runs one: its __main__.py, in this process
        if os.path.isfile(os.path.join(argv0, "__main__.py")):
            return "script", argv0
        raise FileNotFoundError(f"rocprof run: {argv0!r} is a folder without a __main__.py (give "
                                f"a script in it, or -m for a package)")
    if os.sep not in argv0:
        import shutil

        found = shutil.which(argv0)
        if found:
            return "command", found
        raise FileNotFoundError(f"rocprof run: {argv0!r} is neither a file nor a command on PATH")
    raise FileNotFoundError(f"rocprof run: {argv0!r} not found (check the path)")


def _own_without_input(own: list[str]) -> list[str]:
    """The command line's own options less -i FILE (each job adds its file's options)."""
    out, skip = [], False
    for a in own:
        if skip:
            skip = False
        elif a in ("-i", "--input"):
            skip = True
        elif not a.startswith(("--input=", "-i=")):
            out.append(a)
    return out
