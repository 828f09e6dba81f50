"""The options of `rocprof run`, with their help: names as rocprofv3's (rocprof-sys's for the
device metrics), each with what it does and its real default, and the README's commands as
examples."""

from __future__ import annotations

import argparse

from . import rocprofv3_options as v3
from .help_text import epilog

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

OUTPUT_HELP = (
    "The database is DIR/NAME_results.db (default rocprof-output/HOSTNAME/PID_results.db); its "
    "absolute path is printed at exit, with every file --stats and -f write."
)

EXAMPLES = (
    "rocprof run train.py --epochs 1                  # ROCTx ranges, kernels and copies",
    "rocprof run -d rocprof-output -o run1 --stats -S train.py   # named; stats CSVs; summary",
    "rocprof run --sys-trace -- python3 train.py      # any command, as rocprofv3",
    "rocprof run -o timeit -m timeit -n 1000 \"sum(range(100))\"   # a module, as python -m",
    "rocprof run --sample 1000 --sampling-mode wall train.py   # Python call stacks",
    "rocprof run -f csv pftrace -- ./app              # also CSV and a Perfetto trace",
    "rocprof run --process-freq 50 train.py           # GPU/CPU utilisation, memory, power",
    "rocprof run --pmc dram__bytes_read.sum -- ./app  # counters per kernel (NVIDIA)",
    "srun -n 4 rocprof run -o r%rank% -- python3 train.py   # one database per rank",
)

# `--sample`/`--process-freq` with no rate (not a string: argparse would run it through type=int).
DEFAULT_RATE = object()


def _core_default(settings: str, name: str, fallback: int) -> int:
    """A default the core states (SamplingSettings.DEFAULT_HZ ...): help shows its number."""
    try:
        from .. import _core

        return int(getattr(getattr(_core, settings), name))
    except (ImportError, AttributeError):  # no native build: help still works
        return fallback


def add_parser(p) -> None:
    sample_hz = _core_default("SamplingSettings", "DEFAULT_HZ", 1000)
    metrics_hz = _core_default("MetricsSettings", "DEFAULT_HZ", 20)
    metrics_max = _core_default("MetricsSettings", "MAX_HZ", 1000)
    p.epilog = epilog(OUTPUT_HELP, TRACE_HELP, COUNTERS_HELP, examples=EXAMPLES)
    out = p.add_argument_group("output")
    out.add_argument("-d", "--output-directory", metavar="DIR",
                     help="folder for the database (default rocprof-output/%%hostname%%); "
                          "placeholders as rocprofv3's: %%hostname%% %%pid%% %%ppid%% %%rank%% "
                          "%%tag%% %%argt%% %%job%% %%size%% %%nid%% %%launch_time%% %%cwd%% "
                          "%%env{VAR}%% ($env{VAR}, %%q{VAR}%%), %%p %%j %%r %%s")
    out.add_argument("-o", "--output-file", metavar="NAME",
                     help="database name: NAME_results.db (default %%pid%%); further processes "
                          "of the run get NAME_<pid>_results.db")
    out.add_argument("--no-clobber", action="store_true",
                     help="refuse to start when the database already exists (by default a "
                          "finished run's file is replaced, and one in use gets another name)")
    v3.add_bool(out, "--stats", help="write rocprofv3's NAME_*_stats.csv beside the database")
    v3.add_bool(out, "-S", "--summary", help="print the summary tables and the top three "
                "findings at exit")
    out.add_argument("-f", "--output-format", nargs="+", choices=v3.FORMATS, default=[],
                     metavar="FMT", help="also write each database at exit as csv, json (Chrome "
                     "trace), pftrace (Perfetto), otf2 or rocpd (the database itself), several "
                     "allowed: NAME_results.json, ... beside it (default: the database only)")
    out.add_argument("-u", "--summary-units", choices=tuple(v3.UNITS), default="nsec",
                     help="time unit of the -S tables: sec, msec, usec or nsec (default nsec)")
    out.add_argument("--summary-output-file", metavar="PATH",
                     help="write the -S tables to PATH instead of standard output")
    out.add_argument("-i", "--input", metavar="FILE",
                     help="rocprofv3 input file: YAML or JSON options ({jobs: [...]} runs the "
                          "program once per job), or text with 'pmc: NAME ...' lines (one job "
                          "each)")
    out.add_argument("--log-level", choices=v3.LOG_LEVELS, default="warning",
                     help="fatal, error, warning (default), info, trace or env: error and fatal "
                          "hide rocprof's notes (options that cannot apply here)")
    out.add_argument("--preload", nargs="+", default=[], metavar="LIB",
                     help="libraries put first in LD_PRELOAD of the command (rocprof run -- CMD)")
    out.add_argument("--minimum-output-data", type=int, default=0, metavar="KB",
                     help="write --stats, -S and -f outputs of a database only when it holds "
                          "more than KB kilobytes (default 0: always; the database itself is "
                          "always kept)")
    out.add_argument("--no-redact", action="store_true",
                     help="keep URL credentials and token-shaped values in recorded text (ROCTx "
                          "messages, names); the command line and environment are redacted always")
    out.add_argument("--guid-per-row", action="store_true",
                     help="store the database guid in every row, as ROCm's writer does (about 36 "
                          "bytes a row). By default each table's guid column is generated: every "
                          "row reads the guid but none stores it, which readers need SQLite 3.31 "
                          "(2020) or later for")
    out.add_argument("--buffer-budget", type=int, default=2048, metavar="MiB",
                     help="memory the record buffers may grow to in a burst (default 2048); "
                          "past it records are dropped, counted and reported at exit")
    _add_tracing(p)
    _add_counters(p)
    sm = p.add_argument_group("call-stack sampling (Python processes)")
    sm.add_argument("--sample", nargs="?", const=DEFAULT_RATE, type=int, metavar="HZ",
                    help=f"sample the call stacks of every Python thread HZ times a second "
                         f"(without HZ: {sample_hz}; 1 to 100000); off by default")
    sm.add_argument("--sampling-mode", choices=("cpu", "wall"), default="cpu",
                    help="cpu (default): a thread is sampled as it uses CPU time, so the samples "
                         "say where the CPU went; wall: every thread at every tick, so waits "
                         "(sleep, I/O, a GPU sync, a lock) show at the line that waits")
    v3.add_bool(sm, "--native-stacks", help="merge native (C/C++) frames into the Python stacks; "
                "needs libunwind (`rocprof info` says whether this build has it)")
    mt = p.add_argument_group(
        "device and host metrics over time (rocprof-sys's process sampling options)",
        "A thread of its own reads each GPU's utilisation, memory in use, power, temperature, "
        "clocks, throttle reasons and PCIe/NVLink throughput (NVML on NVIDIA, AMD SMI or ROCm "
        "SMI on AMD) and, from /proc, each core's load and frequency and this process's RSS, "
        "page faults and CPU use; stored as sampled counters (rocpd_info_pmc, rocpd_pmc_event), "
        "shown as counter tracks in the pftrace/json exports, summarised by `rocpd summary` and "
        "plotted by `rocpd plot`.")
    mt.add_argument("--process-freq", nargs="?", const=DEFAULT_RATE, type=int, metavar="HZ",
                    help=f"sample device and host metrics HZ times a second (without HZ: "
                         f"{metrics_hz}; at most {metrics_max}); off by default")
    mt.add_argument("--gpus", metavar="LIST", default="all",
                    help="GPUs to sample, as the program numbers them (CUDA/HIP ordinals): all "
                         "(default), none, or a list like 0,2-3")
    mt.add_argument("--cpus", metavar="LIST", default="all",
                    help="cores whose load and frequency to sample: all (default), none, or a "
                         "list like 0-7")
    _add_collectives(p)
    pr = p.add_argument_group("the program")
    pr.add_argument("--no-follow-children", dest="follow_children", action="store_false",
                    help="do not profile Python child processes (subprocess, multiprocessing "
                         "spawn, torchrun ranks); fork() children are always followed")
    pr.add_argument("-m", dest="module", metavar="MODULE",
                    help="run a library module as a script, as python -m MODULE")
    pr.add_argument("target", nargs=argparse.REMAINDER,
                    help="script.py [args], or -- CMD [args] for any program (python3 app.py, "
                         "torchrun ..., ./app): each process it starts writes its own database")


def _add_tracing(p) -> None:
    tr = p.add_argument_group("tracing (rocprofv3 names; each takes an optional BOOL)")
    v3.add_bool(tr, "--marker-trace", help="ROCTx ranges and marks (always on)")
    v3.add_bool(tr, "--kernel-trace", help="GPU kernel dispatches (on by default where a GPU "
                "backend is live)")
    v3.add_bool(tr, "--memory-copy-trace", help="GPU memory copies and sets (on by default where "
                "a GPU backend is live)")
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
    tr.add_argument("--collection-period-unit", choices=tuple(v3.PERIOD_UNITS), default="sec",
                    help="unit of -P's DELAY and DURATION: hour, min, sec (default), msec, usec "
                         "or nsec")
    tr.add_argument("--trace-kernel-include-regex", metavar="RE",
                    help="trace only kernels matching RE (POSIX ERE on the demangled name)")
    tr.add_argument("--trace-kernel-exclude-regex", metavar="RE",
                    help="leave kernels matching RE out of the trace")
    v3.add_bool(tr, "--kernel-rename", help="name each dispatch in the database (region name) by "
                "the innermost ROCTx range it was launched in, as rocprofv3")
    v3.add_bool(tr, "-T", "--truncate-kernels", help="kernel names without arguments")
    v3.add_bool(tr, "-M", "--mangled-kernels", help="keep mangled kernel names")


def _add_collectives(p) -> None:
    co = p.add_argument_group(
        "collectives (NCCL/RCCL)",
        "Each collective and send/recv call with its operation, datatype, count and bytes, "
        "communicator, root/peer, rank, stream, algorithm and protocol, stored as ROCm stores "
        "RCCL API calls (rocpd_region of category RCCL_API, arguments in rocpd_arg); `rocpd "
        "summary` and `rocpd ranks` add algorithm and bus bandwidth per operation and size. "
        "Through NCCL's profiler plugin interface (NCCL >= 2.27; older NCCL: collectives as "
        "kernels only, said by rocpd summary). AMD RCCL has the same interface: not yet run on AMD "
        "hardware.")
    v3.add_bool(co, "--rccl-trace", "--nccl-trace", help="trace collective calls (on with "
                "--sys-trace and --runtime-trace, as rocprofv3)")


def _add_counters(p) -> None:
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
    # rocprofv3's --kernel-include/exclude-regex select the kernels whose counters are
    # collected (--pmc) and never drop dispatches from the trace; ours do that by name.
    hw.add_argument("--kernel-include-regex", metavar="RE",
                    help="collect counters (--pmc) only of kernels matching RE (the trace keeps "
                         "every kernel, as rocprofv3)")
    hw.add_argument("--kernel-exclude-regex", metavar="RE",
                    help="collect no counters of kernels matching RE")
    hw.add_argument("-L", "--list-avail", action="store_true",
                    help="list the counters of each GPU here and exit (as `rocprof avail`)")
