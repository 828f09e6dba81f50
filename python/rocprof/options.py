"""What a profiling session collects, shared by the launcher and the in-process API.

Tracing option names follow rocprofv3. Each capture backend turns the options it serves into
calls on rocprof._core before the session starts (see backends.py); an option no live
backend can serve produces one line saying so, never an error.
"""

from __future__ import annotations

from . import _core, option_table


class Options:
    """Every field below with its default; Options(name=value, ...) sets some. A plain class,
    not a dataclass: each profiled process builds one before its program starts, and the
    dataclasses module (with inspect, ast, dis) and the generated __init__ cost more than the
    rest of the launcher's Python (B7). A list or dict default is copied per instance."""

    output_dir: str | None = None
    output_file: str | None = None
    no_clobber: bool = False           # an existing database is an error, never replaced
    marker_trace: bool = True
    kernel_trace: bool = False
    memory_copy_trace: bool = False
    memory_allocation_trace: bool = False
    allocator_trace: bool = False      # --allocator-trace: PyTorch's caching allocator alone
    runtime_trace: bool = False
    runtime_trace_all: bool = False    # also cudaGetDevice & co. (left out by default)
    hip_trace: bool = False            # AMD: HIP runtime API calls (--hip-trace)
    hsa_trace: bool = False            # AMD: HSA API calls (--hsa-trace)
    kernel_include_regex: str | None = None
    kernel_exclude_regex: str | None = None
    trace_kernel_include_regex: str | None = None   # ours: these drop dispatches from the trace
    trace_kernel_exclude_regex: str | None = None
    kernel_rename: bool = False        # dispatch region names = innermost ROCTx range
    redact_text: bool = True           # --no-redact: keep credentials/tokens in ROCTx text, names
    minimum_output_data_kb: int = 0    # --minimum-output-data: smaller databases get no outputs
    guid_per_row: bool = False         # --guid-per-row: guid stored in each row (old SQLite readers)
    truncate_kernels: bool = False
    mangled_kernels: bool = False
    sample: int | None = None          # Hz; None: no call-stack sampling
    sampling_mode: str = "cpu"         # cpu | wall
    sampling_method: str = "signal"    # signal | thread
    native_stacks: bool = False
    process_freq: int | None = None    # Hz of device/host metrics (--process-freq); None: off
    energy: bool = False               # --energy: GPU energy counters at >= 100 Hz
    gpus: str = "all"                  # --gpus: which GPUs' metrics (all, none, 0,2-3)
    cpus: str = "all"                  # --cpus: which cores' load and frequency
    stats: bool = False
    summary: bool = False
    commit_ms: int = 250
    ring_capacity: int = 1 << 14      # records per buffer chunk (2 MiB)
    buffer_budget_mb: int = 2048       # all threads' record buffers together; README "Overflow"
    max_size: int | None = None        # --max-size in bytes: a bounded run (rocprof/bounded.py)
    keep: str = "auto"                 # --keep: auto | slowest:N | every:K
    follow_fork: bool = True
    follow_children: bool = True       # Python children (subprocess, torchrun, spawn)
    default_gpu: bool = False          # GPU tracing on by default, not asked for: no notes
    output_formats: list = []  # -f: csv json pftrace otf2
    summary_units: str = "ns"          # -u, as rocpd.summary.stats names units
    summary_output_file: str | None = None
    selected_regions: bool = False     # start paused (roctxProfilerResume starts recording)
    collection_periods: list = []  # -P: (delay, duration, repeat)
    collection_period_unit: str = "sec"
    log_level: str = "warning"         # notes are warnings: hidden at error/fatal
    preload: list = []  # --preload: LD_PRELOAD of commands
    # Per-kernel hardware counters (--pmc NAME..., --sol): vendor metric names as collected,
    # the rocprofv3 names that were mapped to them, and the measured peaks --sol compares with
    # (rocprof.peaks; stored with the options so `rocpd sol` finds them in the database).
    pmc: list = []
    sol: bool = False
    counter_aliases: dict = {}
    empirical_peaks: dict | None = None
    # --on-demand: nothing records until `rocprof ctl start` (session/control.hpp); each window
    # is a database of its own.
    on_demand: bool = False
    # PC sampling (--pc-sampling, rocprofv3's --pc-sampling-method/-unit/-interval); an
    # interval of 0 is the backend's default period.
    pc_sampling: bool = False
    pc_sampling_method: str = "stochastic"
    pc_sampling_unit: str = "cycles"
    pc_sampling_interval: int = 0
    gpu_metrics: bool = False                  # --gpu-metrics: PM sampling (NVIDIA)
    gpu_metrics_frequency: int | None = None   # None: the core's default rate
    gpu_metrics_set: str | None = None         # None: "default"
    # Launch sites and CUDA graphs (rocprof.capture.site_filter; capture/cupti/graphs.cpp).
    site_filter: str | None = None     # --site-filter SPEC; None: the default library list
    graph_trace: str = "node"          # --graph-trace: node (every kernel) | graph (per replay)
    module_trace: bool = False         # --module-trace: a ROCTx range per nn.Module call
    # Collective calls (--rccl-trace / --nccl-trace): NCCL's profiler plugin (capture/nccl.py).
    rccl_trace: bool = False

    def __init__(self, **values):
        unknown = [name for name in values if name not in _DEFAULTS]
        if unknown:
            raise TypeError(f"Options() got an unexpected keyword argument {unknown[0]!r}")
        for name, default in _DEFAULTS.items():
            if name in values:
                setattr(self, name, values[name])
            else:
                setattr(self, name, default.copy() if isinstance(default, (list, dict)) else default)

    @staticmethod
    def field_names() -> tuple[str, ...]:
        return tuple(_DEFAULTS)

    def as_dict(self) -> dict:
        """Every field's value (lists and dicts copied), in declaration order."""
        return {name: _copied(getattr(self, name)) for name in _DEFAULTS}

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"

    def sys_trace(self) -> None:
        """--sys-trace: every tracing option whose activities are part of it (the table's)."""
        for row in option_table.sys_trace_rows():
            setattr(self, row.dest, True)

    def trace_gpu_by_default(self) -> None:
        """No GPU tracing option given: kernels and memory copies/sets, what a user of nsys or
        torch.profiler expects to see (stated in `rocprof run --help`). Notes about a missing GPU
        backend stay quiet for this default, not for a user who asked for counters or PC
        samples."""
        self.kernel_trace = self.memory_copy_trace = True
        self.default_gpu = not (self.activities() & {"counters", "pc_samples"})

    def gpu_requested(self) -> bool:
        return bool(self.activities() & option_table.GPU_ACTIVITIES)

    def activities(self) -> frozenset[str]:
        """What these options ask to record (rocprof._core.Activity names), from the one table
        of options (rocprof/option_table.py)."""
        return option_table.activities(self)

    def counters_requested(self) -> bool:
        return bool(self.pmc) or self.sol

    def to_json(self) -> str:
        """json.dumps(self.as_dict(), sort_keys=True), written by the core: importing json
        before the program starts would load re and enum with it (B7)."""
        return _core.json_text(self.as_dict())


_DEFAULTS = {name: getattr(Options, name) for name in Options.__annotations__}


def _copied(value):
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value
