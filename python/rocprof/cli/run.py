"""`rocprof run [options] script.py [args]` / `-m module [args]` / `-- CMD [args]`.

A Python script or module runs in this process with the sys.argv, __main__ and sys.path[0]
of plain `python script.py`; any other command (an executable, `python3 app.py`, `torchrun
...`, a shell script) runs as a child process whose every process records (command.py). The
exit status is passed through. Options are named as rocprofv3's.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..options import Options
from . import UsageError
from . import rocprofv3_options as v3
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


COUNTERS_HELP = (
    "Hardware counters (--pmc, --sol) are read per kernel dispatch through CUPTI's range "
    "profiler. Collecting them serialises kernels (one runs at a time) and replays each kernel "
    "once per counter pass, as rocprofv3 --pmc and Nsight Compute do: kernel durations and the "
    "run's wall time under --pmc are not those of a normal run, and the database says so "
    "(metadata rocprof.counters.serialized)."
)

# `--sample` with no rate (not a string: argparse would run it through type=int).
DEFAULT_RATE = object()


def add_parser(p) -> None:
    p.epilog = TRACE_HELP + " " + COUNTERS_HELP
    out = p.add_argument_group("output")
    out.add_argument("-d", "--output-directory", metavar="DIR",
                     help="folder for the database (default rocprof-output/%%hostname%%); "
                          "placeholders as rocprofv3's: %%hostname%% %%pid%% %%ppid%% %%rank%% "
                          "%%tag%% %%argt%% %%job%% %%size%% %%nid%% %%launch_time%% %%cwd%% "
                          "%%env{VAR}%% ($env{VAR}, %%q{VAR}%%), %%p %%j %%r %%s")
    out.add_argument("-o", "--output-file", metavar="NAME",
                     help="database name: NAME_results.db (default %%pid%%)")
    out.add_argument("--no-clobber", action="store_true",
                     help="refuse to start when the database already exists (by default a "
                          "finished run's file is replaced, and one in use gets another name)")
    v3.add_bool(out, "--stats", help="write *_stats.csv beside the database")
    v3.add_bool(out, "-S", "--summary", help="print summary tables at exit")
    out.add_argument("-f", "--output-format", nargs="+", choices=v3.FORMATS, default=[],
                     metavar="FMT", help="also write each database as csv, json (Chrome trace), "
                     "pftrace (Perfetto), otf2 or rocpd at exit, several allowed")
    out.add_argument("-u", "--summary-units", choices=tuple(v3.UNITS), default="nsec",
                     help="time unit of the -S tables")
    out.add_argument("--summary-output-file", metavar="PATH",
                     help="write the -S tables to PATH instead of standard output")
    out.add_argument("-i", "--input", metavar="FILE",
                     help="rocprofv3 input file (YAML or JSON; {jobs: [...]} runs the target once "
                          "per job)")
    tr = p.add_argument_group("tracing (rocprofv3 names; each takes an optional BOOL)")
    v3.add_bool(tr, "--marker-trace", help="ROCTx ranges and marks (always on)")
    v3.add_bool(tr, "--kernel-trace", help="GPU kernel dispatches")
    v3.add_bool(tr, "--memory-copy-trace", help="GPU memory copies and sets")
    v3.add_bool(tr, "--memory-allocation-trace", help="GPU allocations and frees")
    v3.add_bool(tr, "-r", "--runtime-trace", help="GPU runtime and driver API calls and "
                "synchronisations (costly: every CUDA call becomes a record)")
    v3.add_bool(tr, "--runtime-trace-all", help="with --runtime-trace/--sys-trace, also the "
                "state queries left out by default (cudaGetDevice, cudaGetLastError, event "
                "create/destroy, as torch.profiler drops them; and the driver calls the runtime "
                "and CUPTI make inside, e.g. cuDevicePrimaryCtxGetState, cuKernelGetName): "
                "~20 records per kernel of a PyTorch step. Metadata rocprof.cupti.api_left_out "
                "lists what was left out")
    v3.add_bool(tr, "--hip-trace", help="AMD: HIP runtime API calls, each tied to its GPU work "
                "by correlation id")
    v3.add_bool(tr, "--hsa-trace", help="AMD: HSA API calls (every call: costly)")
    v3.add_bool(tr, "-s", "--sys-trace", help="all of the above")
    v3.add_bool(tr, "--selected-regions", help="start paused: record only between "
                "roctxProfilerResume and roctxProfilerPause (roctx.resume()/pause())")
    tr.add_argument("-P", "--collection-period", action="append", type=v3.parse_period,
                    default=[], metavar="DELAY:DURATION:REPEAT",
                    help="record only DURATION after DELAY, REPEAT times (0: for ever); "
                         "several -P run one after another (Python processes)")
    tr.add_argument("--collection-period-unit", choices=tuple(v3.PERIOD_UNITS), default="sec")
    out.add_argument("--log-level", choices=v3.LOG_LEVELS, default="warning",
                     help="error or fatal hides rocprof's notes (options that cannot apply)")
    out.add_argument("--preload", nargs="+", default=[], metavar="LIB",
                     help="libraries put first in LD_PRELOAD of the command (rocprof run -- CMD)")
    # rocprofv3's --kernel-include/exclude-regex select the kernels whose counters are
    # collected (--pmc) and never drop dispatches from the trace; ours do that by name.
    tr.add_argument("--kernel-include-regex", metavar="RE",
                    help="collect counters (--pmc) only of kernels matching RE (the trace keeps "
                         "every kernel, as rocprofv3)")
    tr.add_argument("--kernel-exclude-regex", metavar="RE",
                    help="collect no counters of kernels matching RE")
    tr.add_argument("--trace-kernel-include-regex", metavar="RE",
                    help="trace only kernels matching RE (POSIX ERE on the demangled name)")
    tr.add_argument("--trace-kernel-exclude-regex", metavar="RE",
                    help="leave kernels matching RE out of the trace")
    v3.add_bool(tr, "--kernel-rename", help="name each dispatch in the database (region name) by "
                "the innermost ROCTx range it was launched in, as rocprofv3")
    v3.add_bool(tr, "-T", "--truncate-kernels", help="kernel names without arguments")
    v3.add_bool(tr, "-M", "--mangled-kernels", help="keep mangled kernel names")
    hw = p.add_argument_group("hardware counters (serialise kernels: see below)")
    hw.add_argument("--pmc", nargs="+", action="extend", default=[], metavar="NAME",
                    help="counters to read for every kernel dispatch: CUPTI metric names "
                         "(dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed) "
                         "or rocprofv3 names mapped to their nearest NVIDIA metric (SQ_WAVES, "
                         "FETCH_SIZE, ...); `rocprof avail` lists them. Kernels are serialised "
                         "and replayed once per counter pass")
    v3.add_bool(hw, "--sol", help="the speed-of-light counter set (FLOP/s by precision, DRAM and "
                "L2 bytes, occupancy, SM throughput, the hardware's peaks) for `rocpd sol` and the "
                "roofline; measures the GPU's empirical peaks once (rocprof peaks, cached). "
                "Serialises kernels like --pmc")
    hw.add_argument("-L", "--list-avail", action="store_true",
                    help="list the counters of each GPU here and exit (as `rocprof avail`)")
    sm = p.add_argument_group("sampling")
    sm.add_argument("--sample", nargs="?", const=DEFAULT_RATE, type=int, metavar="HZ",
                    help="call-stack sampling at HZ (without HZ: the core's default rate, "
                         "SamplingSettings.DEFAULT_HZ)")
    sm.add_argument("--sampling-mode", choices=("cpu", "wall"), default="cpu")
    v3.add_bool(sm, "--native-stacks", help="merge native frames into stacks")
    out.add_argument("--minimum-output-data", type=int, default=0, metavar="KB",
                     help="write --stats, -S and -f outputs of a database only when it holds "
                          "more than KB kilobytes (the database itself is always kept)")
    out.add_argument("--no-redact", action="store_true",
                     help="keep URL credentials and token-shaped values in recorded text (ROCTx "
                          "messages, names); the command line and environment are redacted always")
    out.add_argument("--guid-per-row", action="store_true",
                     help="store the database guid in every row, as ROCm's writer does (about 36 "
                          "bytes a row). By default each table's guid column is generated: every "
                          "row reads the guid but none stores it, which readers need SQLite 3.31 "
                          "(2020) or later for")
    mt = p.add_argument_group(
        "device and host metrics over time (rocprof-sys's process sampling options)",
        "A thread of its own reads each GPU's utilisation, memory in use, power, temperature, "
        "clocks, throttle reasons and PCIe/NVLink throughput (NVML on NVIDIA, AMD SMI or ROCm "
        "SMI on AMD) and, from /proc, each core's load and frequency and this process's RSS, "
        "page faults and CPU use; stored as sampled counters (rocpd_info_pmc, rocpd_pmc_event), "
        "shown as counter tracks in the pftrace/json exports, summarised by `rocpd summary` and "
        "plotted by `rocpd plot`.")
    mt.add_argument("--process-freq", nargs="?", const=DEFAULT_RATE, type=int, metavar="HZ",
                    help="sample device and host metrics HZ times a second (without HZ: "
                         "MetricsSettings.DEFAULT_HZ, 20; at most 1000); off by default")
    mt.add_argument("--gpus", metavar="LIST", default="all",
                    help="GPUs to sample, as the program numbers them (CUDA/HIP ordinals): all "
                         "(default), none, or a list like 0,2-3")
    mt.add_argument("--cpus", metavar="LIST", default="all",
                    help="cores whose load and frequency to sample: all (default), none, or a "
                         "list like 0-7")
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
           "--kernel-exclude-regex", "--trace-kernel-include-regex",
           "--trace-kernel-exclude-regex", "--minimum-output-data", "--sampling-mode", "--buffer-budget", "-u",
           "--summary-units", "--summary-output-file", "-i", "--input", "-P",
           "--collection-period", "--collection-period-unit", "--log-level", "--gpus", "--cpus"}
# rocprofv3 flags that take an optional BOOL after them (`--sys-trace false`).
_BOOLS = {"--stats", "-S", "--summary", "--marker-trace", "--kernel-trace", "--memory-copy-trace",
          "--memory-allocation-trace", "-r", "--runtime-trace", "-s", "--sys-trace", "--hip-trace", "--hsa-trace",
          "--runtime-trace-all", "--selected-regions", "-T", "--truncate-kernels", "-M", "--mangled-kernels",
          "--native-stacks", "--kernel-rename", "--sol"}


def _is_counter_name(token: str) -> bool:
    """A token after --pmc that names a counter, not the script: no path separator, no .py."""
    import re

    return (re.fullmatch(r"[A-Za-z0-9_.,]+", token) is not None and not token.endswith(".py")
            and not os.path.exists(token))


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
        elif a in ("--sample", "--process-freq") and i + 1 < len(argv) and argv[i + 1].isdigit():
            i += 1
        elif a in _BOOLS and i + 1 < len(argv) and v3.is_bool(argv[i + 1]):
            i += 1
        elif a in ("-f", "--output-format"):
            while i + 1 < len(argv) and argv[i + 1] in v3.FORMATS:
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
    o = Options(output_dir=args.output_directory, output_file=args.output_file,
                no_clobber=args.no_clobber,
                stats=args.stats, summary=args.summary,
                kernel_include_regex=args.kernel_include_regex,
                kernel_exclude_regex=args.kernel_exclude_regex,
                trace_kernel_include_regex=args.trace_kernel_include_regex,
                trace_kernel_exclude_regex=args.trace_kernel_exclude_regex,
                kernel_rename=args.kernel_rename, redact_text=not args.no_redact,
                minimum_output_data_kb=args.minimum_output_data, guid_per_row=args.guid_per_row,
                truncate_kernels=args.truncate_kernels, mangled_kernels=args.mangled_kernels,
                sample=args.sample, sampling_mode=args.sampling_mode,
                native_stacks=args.native_stacks, follow_children=args.follow_children,
                buffer_budget_mb=args.buffer_budget, output_formats=list(args.output_format),
                summary_units=v3.UNITS[args.summary_units],
                summary_output_file=args.summary_output_file,
                selected_regions=args.selected_regions or bool(args.collection_period),
                collection_periods=list(args.collection_period),
                collection_period_unit=args.collection_period_unit, log_level=args.log_level,
                preload=list(args.preload), process_freq=args.process_freq, gpus=args.gpus,
                cpus=args.cpus)
    o.kernel_trace = args.kernel_trace
    o.memory_copy_trace = args.memory_copy_trace
    o.memory_allocation_trace = args.memory_allocation_trace
    o.runtime_trace = args.runtime_trace
    o.runtime_trace_all = args.runtime_trace_all
    o.hip_trace = args.hip_trace
    o.hsa_trace = args.hsa_trace
    if args.sys_trace:
        o.sys_trace()
    elif not o.gpu_requested():
        # The default, stated in --help: what a user of nsys/torch.profiler expects to see.
        o.kernel_trace = o.memory_copy_trace = True
        o.default_gpu = True  # notes about missing GPU backends stay quiet for the default
    o.sol = bool(args.sol)
    if args.pmc or o.sol:
        from rocpd import kernel_metrics as metrics

        try:
            o.pmc, o.counter_aliases = metrics.resolve(args.pmc)
        except ValueError as e:
            raise UsageError(f"rocprof run: {e}") from None
        if o.pmc:
            from .. import counters

            bad = counters.unknown_names(o.pmc)
            if bad:
                raise UsageError(f"rocprof run: --pmc: {bad}")
        # Counter values attach to kernel dispatches: kernels are traced with them; and a user who
        # asked for counters hears why none come (no GPU), unlike the quiet default tracing.
        o.kernel_trace = True
        o.default_gpu = False
    if o.sample is DEFAULT_RATE:  # --sample without a rate: the one default, stated in the core
        from .. import _core

        o.sample = _core.SamplingSettings.DEFAULT_HZ
    if o.process_freq is DEFAULT_RATE:
        from .. import _core

        o.process_freq = _core.MetricsSettings.DEFAULT_HZ
    if o.process_freq is not None:
        from .. import _core

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
    import re

    return text in ("all", "none") or re.fullmatch(r"\d{1,6}(-\d{1,6})?(,\d{1,6}(-\d{1,6})?)*",
                                                    text) is not None


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
    from .. import paths

    paths.TARGET_ARGV[:] = [args.module, *target] if args.module else target
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
