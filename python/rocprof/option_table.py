"""The options of `rocprof run`, declared once: each one's names (rocprofv3's), its kind, its
help, and the activities it asks to record (rocprof._core.Activity names, the vocabulary the
backends read). The argparse declarations (cli/run_parser.py), the sets of options that take a
value or an optional [BOOL] (cli/run.py's split of the command line), the keys of -i input
files, the activities a session records and the options of a `rocprof ctl start` window
(the rows marked `window`) all come from this table. Each row names its group; the groups'
titles and descriptions, which only the help and the manual show, are cli/option_groups.py's.

Kinds:
  bool    rocprofv3's flag with an optional BOOL (`--kernel-trace`, `--sys-trace=false`)
  value   one value (`-d DIR`)
  switch  no value (`--no-clobber`)
  rate    an optional whole number (`--sample [HZ]`); a word after it that is not one is the
          program where it names one, else an error (cli/run.py)
  values  one or more values up to the next option (`--pmc NAME ...`)
  module  `-m MODULE`: the target starts after its value
  target  the program and its arguments
"""

from __future__ import annotations


class Option:
    """One option (plain class: every `rocprof run` builds the table before the program starts,
    and dataclasses would cost more than the table)."""

    __slots__ = ("names", "kind", "help", "activities", "group", "argparse", "dest", "window",
                 "common")

    def __init__(self, names: tuple[str, ...], kind: str, help: str,  # noqa: A002
                 activities: tuple[str, ...] = (), group: str = "", argparse: dict | None = None,
                 window: bool = False, common: bool = False):
        self.names = names
        self.kind = kind
        self.help = help
        self.activities = activities  # what a true value asks to record
        self.group = group
        # Also an option of a window (`rocprof ctl start`, `rocprof attach`): what it records
        # a live backend can begin to record at any time, so a window may add it.
        self.window = window
        # Shown by `rocprof run --help` (one screen); `--help-all` and the manual show every row.
        self.common = common
        self.argparse = argparse or {}  # further add_argument keywords
        # The attribute its value lands in, as argparse names it (read for every option each
        # time a session's activities are worked out: named once here).
        self.dest = self.argparse.get("dest") or next(
            (n for n in names if n.startswith("--")), names[0]).lstrip("-").replace("-", "_")


# The value of a rate given without its number (`--sample`): the launcher puts the core's
# default in its place (the core states it; cli/run.py).
DEFAULT_RATE = object()

# Tracing options that ask for GPU activities; --sys-trace asks for all of them.
_GPU_TRACE = {
    "--kernel-trace": ("kernels",),
    "--memory-copy-trace": ("copies", "sets"),
    "--memory-allocation-trace": ("allocations",),
    "--runtime-trace": ("runtime_api", "driver_api", "sync"),
    "--hip-trace": ("hip_api",),
    "--hsa-trace": ("hsa_api",),
}
# rocprofv3: --sys-trace and --runtime-trace include --rccl-trace (the collective calls).
SYS_TRACE = ("markers", *dict.fromkeys(a for acts in _GPU_TRACE.values() for a in acts),
             "collectives")
# What only a GPU backend records: a run asking for any of it needs one (backends.py).
GPU_ACTIVITIES = frozenset((*(a for acts in _GPU_TRACE.values() for a in acts), "counters",
                            "pc_samples"))
# Counter values and PC samples attach to kernel dispatches: asking for them traces kernels.
_ON_KERNELS = ("kernels",)


def _o(group: str, *names: str, kind: str, help: str, activities: tuple[str, ...] = (),  # noqa: A002
       window: bool = False, common: bool = False, **argparse) -> Option:
    return Option(names, kind, help, activities, group, argparse, window, common)


OPTIONS: tuple[Option, ...] = (
    # ---- output ----
    _o("output", "-d", "--output-directory", kind="value", common=True, metavar="DIR",
       help="folder for the database (default rocprof-output/%%hostname%%); "
            "placeholders as rocprofv3's: %%hostname%% %%pid%% %%ppid%% %%rank%% "
            "%%tag%% %%argt%% %%job%% %%size%% %%nid%% %%launch_time%% %%cwd%% "
            "%%env{VAR}%% ($env{VAR}, %%q{VAR}%%), %%p %%j %%r %%s"),
    _o("output", "-o", "--output-file", kind="value", common=True, metavar="NAME",
       help="database name: NAME_results.db (default %%pid%%; an absolute NAME "
            "leaves -d out); further processes of the run get NAME_<pid>_results.db"),
    _o("output", "--no-clobber", kind="switch",
       help="refuse to start when the database already exists (by default a "
            "finished run's file is replaced, and one in use gets another name)"),
    _o("output", "--stats", kind="bool", common=True,
       help="write rocprofv3's NAME_*_stats.csv beside the database"),
    _o("output", "-S", "--summary", kind="bool", common=True,
       help="print the summary tables and the top three findings at exit"),
    _o("output", "-f", "--output-format", kind="values", common=True, metavar="FMT", default=[],
       help="also write each database at exit as {formats}, several "
            "allowed: NAME_results.json, ... beside it (default: the database only)"),
    _o("output", "-u", "--summary-units", kind="value", choices=("sec", "msec", "usec", "nsec"),
       default="nsec",
       help="time unit of the -S tables: sec, msec, usec or nsec (default nsec)"),
    _o("output", "--summary-output-file", kind="value", metavar="PATH",
       help="write the -S tables to PATH instead of standard output (stdout and "
            "stderr name the streams, as in rocprofv3)"),
    _o("output", "-i", "--input", kind="value", metavar="FILE",
       help="rocprofv3 input file: YAML or JSON options ({jobs: [...]} runs the "
            "program once per job), or text with 'pmc: NAME ...' lines (one job "
            "each)"),
    _o("output", "--log-level", kind="value",
       choices=("fatal", "error", "warning", "info", "trace", "env"), default="warning",
       help="fatal, error, warning (default), info, trace or env: error and fatal "
            "hide rocprof's notes (options that cannot apply here)"),
    _o("output", "--preload", kind="values", default=[], metavar="LIB",
       help="libraries put first in LD_PRELOAD of the command (rocprof run -- CMD)"),
    _o("output", "--minimum-output-data", kind="value", type=int, default=0, metavar="KB",
       help="write --stats, -S and -f outputs of a database only when it holds "
            "more than KB kilobytes (default 0: always; the database itself is "
            "always kept)"),
    _o("output", "--no-redact", kind="switch",
       help="keep URL credentials and token-shaped values in recorded text (ROCTx "
            "messages, names); the command line and environment are redacted always"),
    _o("output", "--guid-per-row", kind="switch",
       help="store the database guid in every row, as ROCm's writer does (about 36 "
            "bytes a row). By default each table's guid column is generated: every "
            "row reads the guid but none stores it, which readers need SQLite 3.31 "
            "(2020) or later for"),
    _o("output", "--buffer-budget", kind="value", type=int, default=2048, metavar="MiB",
       help="memory the record buffers may grow to in a burst (default 2048); "
            "past it records are dropped, counted and reported at exit"),
    _o("output", "--max-size", kind="value", metavar="SIZE",
       help="keep the database under SIZE (5MB, 20GB) however long the run: every step "
            "(ROCTx step range) keeps a summary row, only the steps --keep names keep their "
            "records (docs: Long runs in bounded space)"),
    _o("output", "--keep", kind="value", metavar="POLICY", default="auto",
       help="which steps keep their records under --max-size: auto (warm-up, a rolling "
            "baseline, the slowest and anomalous steps; the default), slowest:N, every:K"),
    # ---- tracing ----
    _o("tracing", "--marker-trace", kind="bool", activities=("markers",),
       help="ROCTx ranges and marks (always on)"),
    _o("tracing", "--kernel-trace", kind="bool", common=True,
       activities=_GPU_TRACE["--kernel-trace"], window=True,
       help="GPU kernel dispatches (on by default where a GPU backend is live)"),
    _o("tracing", "--memory-copy-trace", kind="bool", activities=_GPU_TRACE["--memory-copy-trace"],
       window=True,
       help="GPU memory copies and sets (on by default where a GPU backend is live)"),
    _o("tracing", "--memory-allocation-trace", kind="bool",
       activities=_GPU_TRACE["--memory-allocation-trace"], window=True,
       help="GPU allocations and frees: the runtime's (REAL rows) and, with PyTorch, each "
            "caching-allocator block, segment and out-of-memory with its Python line (VIRTUAL "
            "rows)"),
    _o("tracing", "--allocator-trace", kind="bool", activities=("allocator",),
       help="PyTorch's caching allocator alone (ours): each block, segment and out-of-memory "
            "with its Python line, without the runtime's allocations and the API callbacks they "
            "need (cheaper than --memory-allocation-trace, which records both)"),
    _o("tracing", "-r", "--runtime-trace", kind="bool",
       activities=(*_GPU_TRACE["--runtime-trace"], "collectives"), window=True,
       help="GPU runtime and driver API calls and synchronisations (costly: every CUDA call "
            "becomes a record)"),
    _o("tracing", "--runtime-trace-all", kind="bool",
       help="with --runtime-trace/--sys-trace, also the "
            "state queries left out by default (cudaGetDevice, cudaGetLastError, event "
            "create/destroy, as torch.profiler drops them; and the driver calls the runtime "
            "and CUPTI make inside, e.g. cuDevicePrimaryCtxGetState, cuKernelGetName): "
            "~20 records per kernel of a PyTorch step. Metadata rocprof.cupti.api_left_out "
            "lists what was left out"),
    _o("tracing", "--hip-trace", kind="bool", activities=_GPU_TRACE["--hip-trace"], window=True,
       help="AMD: HIP runtime API calls, each tied to its GPU work by correlation id"),
    _o("tracing", "--hsa-trace", kind="bool", activities=_GPU_TRACE["--hsa-trace"], window=True,
       help="AMD: HSA API calls (every call: costly)"),
    _o("tracing", "-s", "--sys-trace", kind="bool", common=True,
       activities=SYS_TRACE, window=True,
       help="every tracing option of this group: kernels, copies, allocations, API calls"),
    _o("tracing", "--selected-regions", kind="bool",
       help="start paused: record only between roctxProfilerResume and roctxProfilerPause "
            "(roctx.resume()/pause())"),
    _o("tracing", "-P", "--collection-period", kind="value", action="append", type="period",
       default=[], metavar="DELAY:DURATION:REPEAT",
       help="record only DURATION after DELAY, REPEAT times (0: for ever); "
            "several -P run one after another (Python processes)"),
    _o("tracing", "--collection-period-unit", kind="value",
       choices=("hour", "min", "sec", "msec", "usec", "nsec"), default="sec",
       help="unit of -P's DELAY and DURATION: hour, min, sec (default), msec, usec or nsec"),
    _o("tracing", "--trace-kernel-include-regex", kind="value", metavar="RE",
       help="trace only kernels matching RE (POSIX ERE on the demangled name)"),
    _o("tracing", "--trace-kernel-exclude-regex", kind="value", metavar="RE",
       help="leave kernels matching RE out of the trace"),
    _o("tracing", "--kernel-rename", kind="bool",
       help="name each dispatch in the database (region name) by the innermost ROCTx range it "
            "was launched in, as rocprofv3"),
    _o("tracing", "-T", "--truncate-kernels", kind="bool",
       help="kernel names as rocprofv3 truncates them: the function's own name, without scope, "
            "template arguments or argument list"),
    _o("tracing", "-M", "--mangled-kernels", kind="bool", help="keep mangled kernel names"),
    # ---- counters ----
    _o("counters", "--pmc", kind="values", common=True,
       activities=("counters", *_ON_KERNELS), action="extend", default=[],
       metavar="NAME",
       help="counters to read for every kernel dispatch: CUPTI metric names "
            "(dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed) "
            "or rocprofv3 names mapped to their nearest NVIDIA metric (SQ_WAVES, "
            "FETCH_SIZE, ...); `rocprof avail` lists them. Kernels are serialised "
            "and replayed once per counter pass"),
    _o("counters", "--sol", kind="bool", activities=("counters", *_ON_KERNELS),
       help="the speed-of-light counter set (FLOP/s by precision, DRAM and "
            "L2 bytes, occupancy, SM throughput, the hardware's peaks) for `rocpd sol` and the "
            "roofline; measures the GPU's empirical peaks once (rocprof peaks, cached). "
            "Serialises kernels like --pmc"),
    # rocprofv3's --kernel-include/exclude-regex select the kernels whose counters are
    # collected (--pmc) and never drop dispatches from the trace; ours do that by name.
    _o("counters", "--kernel-include-regex", kind="value", metavar="RE",
       help="collect counters (--pmc) only of kernels matching RE (the trace keeps "
            "every kernel, as rocprofv3)"),
    _o("counters", "--kernel-exclude-regex", kind="value", metavar="RE",
       help="collect no counters of kernels matching RE"),
    _o("counters", "-L", "--list-avail", kind="switch",
       help="list the counters of each GPU here and exit (as `rocprof avail`)"),
    # ---- on-demand capture ----
    _o("on_demand", "--on-demand", kind="switch", common=True,
       help="start with nothing recording; `rocprof ctl start [--duration 10s] "
            "[DIR|PID]` records a window of every process of the run into its own "
            "database (NAME_w<k>_results.db) with this line's tracing options, "
            "`rocprof ctl stop` ends it, `rocprof ctl status` lists the processes; "
            "without DIR|PID, ctl reaches your live runs from any folder. Each process "
            "serves a socket in <output folder>/.rocprof-ctl/ (owner only)"),
    # ---- PC sampling (rocprofv3's option names) ----
    _o("pc_sampling", "--pc-sampling", "--pc-sampling-beta-enabled", kind="bool",
       activities=("pc_samples", *_ON_KERNELS),
       help="sample the GPU's program counters. NVIDIA: CUPTI's PC sampling in "
            "continuous mode (kernels are not serialised); every warp's state every "
            "2^N SM cycles. Build with -lineinfo (nvcc) for source lines. AMD: "
            "rocprofiler-sdk's PC sampling (ROCm 6.2+, where this build has it; not run "
            "on AMD hardware). Any --pc-sampling-* option turns it on"),
    _o("pc_sampling", "--pc-sampling-method", kind="value", choices=("stochastic", "host_trap"),
       type=str.lower,
       help="rocprofv3's method names (default stochastic). NVIDIA has one "
            "hardware sampler with stall reasons; both names select it. AMD: host_trap "
            "(MI200+, by time) or stochastic (MI300+, by cycles, with stall reasons)"),
    _o("pc_sampling", "--pc-sampling-unit", kind="value", choices=("instructions", "cycles", "time"),
       type=str.lower,
       help="unit of --pc-sampling-interval (default cycles); time is in "
            "microseconds. NVIDIA: cycles and time round to the nearest power of two "
            "between 2^5 and 2^31 cycles; instructions is not available. AMD: the unit "
            "the GPU offers for the method (host_trap: time, stochastic: cycles)"),
    _o("pc_sampling", "--pc-sampling-interval", kind="value", type=int, metavar="N",
       help="sampling interval in --pc-sampling-unit (default: the backend's own, "
            "CUPTI's chosen by the SM count; on AMD rocprofv3's documented 1 us or 2^20 "
            "cycles); the period used is in the database's metadata "
            "(rocprof.pc_sampling.period)"),
    # ---- GPU hardware metrics over time ----
    _o("gpu_metrics", "--gpu-metrics", kind="bool", activities=("gpu_metrics", *_ON_KERNELS),
       window=True,
       help="sample the GPU's performance monitors {gpu_metrics_hz} times a second (SM, "
            "tensor pipe, DRAM, L2, PCIe, NVLink) beside kernel tracing, without replaying "
            "kernels; the rate achieved and any overflow are printed and stored. Any "
            "--gpu-metrics-* option turns it on"),
    _o("gpu_metrics", "--gpu-metrics-frequency", kind="value", type=int, metavar="HZ",
       activities=("gpu_metrics", *_ON_KERNELS),
       help="samples per second (default {gpu_metrics_hz}: a 1 ms kernel spans 5; "
            "1 to {gpu_metrics_max})"),
    _o("gpu_metrics", "--gpu-metrics-set", kind="value", metavar="NAME",
       activities=("gpu_metrics", *_ON_KERNELS),
       help="default (everything below that the chip has in one pass), compute (SM, tensor "
            "pipes, occupancy) or memory (DRAM, L2, PCIe, NVLink); or CUPTI metric names "
            "separated by commas (`rocprof avail --chip GH100` lists a chip's)"),
    # ---- sampling ----
    _o("sampling", "--sample", kind="rate", common=True,
       activities=("samples",), window=True, metavar="HZ",
       help="sample the call stacks of every Python thread HZ times a second "
            "(without HZ: {sample_hz}; 1 to 100000); off by default"),
    _o("sampling", "--sampling-mode", kind="value", choices=("cpu", "wall"), default="cpu",
       help="cpu (default): a thread is sampled as it uses CPU time, so the samples "
            "say where the CPU went; wall: every thread at every tick, so waits "
            "(sleep, I/O, a GPU sync, a lock) show at the line that waits"),
    _o("sampling", "--sampling-method", kind="value", choices=("signal", "thread"),
       default="signal",
       help="signal (default): a timer signal makes each sampled thread copy its own "
            "frames: exact stacks, native frames possible, one interrupt per sample "
            "on the thread; thread: a rocprof thread reads the threads' frames while "
            "they run: no signals, nothing runs on them, but a stack read mid-call may "
            "be a call behind or torn (counted, not stored); Python frames only"),
    _o("sampling", "--native-stacks", kind="bool",
       help="merge native (C/C++) frames into the Python stacks; needs libunwind (`rocprof "
            "info` says whether this build has it)"),
    # ---- metrics ----
    _o("metrics", "--process-freq", kind="rate", common=True,
       activities=("metrics",), metavar="HZ",
       help="sample device and host metrics HZ times a second (without HZ: "
            "{metrics_hz}; at most {metrics_max}); off by default"),
    _o("metrics", "--energy", kind="bool", activities=("metrics",),
       help="sample each GPU's cumulative energy counter (its power where it has none) "
            "{energy_hz} times a second, or at --process-freq's rate if higher, for the "
            "joules of each step, ROCTx range and kernel; alone it reads nothing else"),
    _o("metrics", "--gpus", kind="value", metavar="LIST", default="all",
       help="GPUs to sample, as the program numbers them (CUDA/HIP ordinals): all "
            "(default), none, or a list like 0,2-3"),
    _o("metrics", "--cpus", kind="value", metavar="LIST", default="all",
       help="cores whose load and frequency to sample: all (default), none, or a "
            "list like 0-7"),
    # ---- launch sites and CUDA graphs ----
    _o("sites", "--site-filter", kind="value", metavar="SPEC",
       help="which Python frames are library code, skipped when naming a GPU "
            "launch's site (its innermost user frame; the whole stack is kept): "
            "comma-separated path prefixes, globs or @groups (stdlib, site-packages, "
            "torch, triton, generated, rocprof: the default); +ENTRY adds to the "
            "default, -ENTRY makes it user code (--site-filter=-@torch shows "
            "torch's own lines), none: no filter"),
    _o("sites", "--graph-trace", kind="value", choices=("node", "graph"), default="node",
       help="kernels of CUDA graph replays: node (default) records every kernel "
            "with its graph and node ids and the line that captured it; graph one "
            "span per replay (nsys --cuda-graph-trace)"),
    _o("sites", "--module-trace", kind="bool",
       help="name the nn.Module path active at each launch "
            "(Transformer.layers.3.attn.proj): a ROCTx range per module call, summed by "
            "`rocpd summary --by module`; costs ~5-12 us per module call on a CPU "
            "(benchmarks/RESULTS.md)"),
    # ---- collectives ----
    _o("collectives", "--rccl-trace", "--nccl-trace", kind="bool", activities=("collectives",),
       help="trace collective calls (on with --sys-trace and --runtime-trace, as rocprofv3)"),
    # ---- the program ----
    _o("program", "--no-follow-children", kind="switch", dest="follow_children",
       action="store_false",
       help="do not profile Python child processes (subprocess, multiprocessing "
            "spawn, torchrun ranks); fork() children are always followed"),
    _o("program", "-m", kind="module", common=True, dest="module", metavar="MODULE",
       help="run a library module as a script, as python -m MODULE"),
    _o("program", "target", kind="target", common=True,
       help="script.py [args], or -- CMD [args] for any program (python3 app.py, "
            "torchrun ..., ./app): each process it starts writes its own database"),
)


def names(kind: str) -> frozenset[str]:
    """Every spelling of the options of one kind (split_argv: which take a value)."""
    return frozenset(n for o in OPTIONS if o.kind == kind for n in o.names)


def window_options() -> tuple[Option, ...]:
    """The options a window takes, in the table's order."""
    return tuple(o for o in OPTIONS if o.window)


def by_name(name: str) -> Option | None:
    return next((o for o in OPTIONS if name in o.names), None)


def input_flag(key: str) -> str:
    """The option a key of a -i input file names (`kernel_trace` → `--kernel-trace`, as
    rocprofv3 spells its keys); an unknown key is passed on as such, for argparse to refuse."""
    flag = "--" + str(key).replace("_", "-")
    return flag if by_name(flag) is not None else flag


def gpu_trace_rows() -> tuple[Option, ...]:
    """The tracing options that ask for GPU activities (none given: the default set)."""
    return tuple(o for o in OPTIONS if o.group == "tracing" and o.kind == "bool"
                 and set(o.activities) & GPU_ACTIVITIES and set(o.activities) < set(SYS_TRACE))


def sys_trace_rows() -> tuple[Option, ...]:
    """What --sys-trace turns on: every bool option whose activities are a part of its own."""
    return tuple(o for o in OPTIONS if o.kind == "bool" and o.activities
                 and set(o.activities) < set(SYS_TRACE))


def activities(values) -> frozenset[str]:
    """The activities the options ask to record. `values` has one attribute per option's
    destination (an argparse namespace, or rocprof.options.Options)."""
    out: set[str] = set()
    for o in OPTIONS:
        value = getattr(values, o.dest, None)
        if o.kind == "rate":  # any rate asks for it (the launcher checks the range)
            value = value is not None
        if o.activities and not callable(value) and value not in (None, False, [], ""):
            out.update(o.activities)
    return frozenset(out)
