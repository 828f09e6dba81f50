"""Guided analysis of rocpd databases: where the GPU's time goes and why, per process/rank and per
step, as DataFrames (the numbers) and findings (what they mean, what to do).

    a = rocpd.analysis.analyze(db)               # or analyze(db, step="train_step", rank=0)
    a.temporal        # per process and GPU: compute / communication / memory / idle over the run
    a.per_step        # the same per step, with the idle breakdown (host late, sync, other ...)
    a.idle            # idle breakdown over the run, including idle between steps
    a.launch_stats    # per kernel name: GPU vs launch-call duration, launch delay, short share
    a.overlap         # per process: communication time and how much of it overlaps compute
    a.stragglers      # per process: compute per step against the median process
    a.lines           # GPU time per Python line (launch sites)
    a.waits           # host waits (synchronisations, copies to host) per Python line
    a.ranges          # GPU time launched inside each ROCTx range
    a.phases          # without GPU work: time in each ROCTx range, share of wall time (cpu.py)
    a.hot_lines       # without GPU work: call-stack samples per innermost Python line
    a.findings()      # ranked plain-language findings (rocpd.analysis.findings)

Every table is also a function of a Connection (``rocpd.analysis.temporal_breakdown(db)``), and
``rocpd analyze DB... [--section ...]`` prints them. Definitions: breakdown.py, steps.py,
attribution.py.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import pandas as pd

from ..collectives import calls
from ..device_metrics import gpu_metrics
from ..energy import meter
from ..memory import compute as memory_compute  # a module: rocpd.memory reads rocpd.analysis
from ..summary.samples import missed_and_taken
from . import attribution, bounded, cpu, quiet, rules, streamed
from .activity import COMM_PATTERN, Process, load
from .attribution import SHORT_KERNEL_NS
from .breakdown import analyze_process
from .sampled import attach_samples
from .sites import short_site
from .spill import pieces_of
from .steps import choose, steps_of

__all__ = ["analyze", "Analysis", "Process", "temporal_breakdown", "idle_breakdown", "step_breakdown",
           "kernel_launch_stats", "comm_overlap", "stragglers", "top_lines", "wait_lines",
           "range_gpu_time", "step_ranges", "SECTIONS", "short_site"]

# Sections of `rocpd analyze` and of the reports, in order: (name, Analysis attribute, title).
SECTIONS = (
    ("findings", None, "Findings"),
    ("steps", "steps", "Steps"),
    ("phases", "phases", "ROCTx phases (share of each process's wall time)"),
    ("hot-lines", "hot_lines", "Hottest sampled lines"),
    ("temporal", "temporal", "Temporal breakdown (whole run, from each GPU's first activity)"),
    ("idle", "idle", "Idle breakdown (whole run)"),
    ("parts", "parts", "Start-up, steps and teardown"),
    ("per-step", "per_step", "Per-step breakdown"),
    ("launch", "launch_stats", "Kernel launch statistics"),
    ("launch-summary", "launch_summary", "Launch summary per process"),
    ("overlap", "overlap", "Communication / computation overlap"),
    ("stragglers", "stragglers", "Stragglers"),
    ("lines", "lines", "Top Python lines by GPU time"),
    ("waits", "waits", "Host waits by Python line"),
    ("ranges", "ranges", "GPU time by ROCTx range"),
)


@dataclass
class Analysis:
    processes: list[Process]
    step_name: str | None
    step_source: str  # "given", "detected", "none" (none found) or "off" (turned off)
    short_ns: int = SHORT_KERNEL_NS
    dropped: int = 0  # records lost while profiling (every figure undercounts)
    # Of them, call-stack samples not taken or not stored (rocprof.dropped_records.sampling),
    # and the samples taken: a missed timer tick is not a lost trace record.
    samples_missed: int = 0
    samples_taken: int = 0
    collectives: object = None  # rocpd.collectives.calls: NCCL/RCCL calls (--rccl-trace)
    meters: list = field(default_factory=list)  # rocpd.energy.meter: each GPU's energy (--energy)
    # rocpd.device_metrics.gpu_metrics.Source: the GPUs' hardware metrics over time
    # (--gpu-metrics), read on demand; None without.
    gpu_metrics: object = None
    memory: object = None  # rocpd.memory.MemoryAnalysis (--memory-allocation-trace), or None
    _cache: dict = field(default_factory=dict, repr=False)

    def _core(self):
        if "core" not in self._cache:
            run, per_step, gaps, blocking, steps, parts = [], [], [], [], [], []
            for p in self.processes:
                st = steps_of(p, self.step_name) if self.step_name else steps_of(p, "")
                r, s, g, b, pt = analyze_process(p, st)
                run += r
                per_step += s
                gaps.append(g)
                blocking.append(b)
                parts += pt
                steps.append(st.assign(process=p.label, rank=p.rank, pid=p.pid))
            self._cache["core"] = (pd.DataFrame(run), pd.DataFrame(per_step), gaps, blocking,
                                   pd.concat(steps, ignore_index=True) if steps else pd.DataFrame(),
                                   pd.DataFrame(parts))
        return self._cache["core"]

    # -- tables -------------------------------------------------------------------------------
    @property
    def run(self):
        """Every number per process and GPU over the run (temporal, idle, overlap)."""
        return self._core()[0]

    @property
    def per_step(self):
        return _per_step_columns(self._core()[1])

    @property
    def steps(self):
        """One row per step; in a bounded database every step from its summary row, with
        Detail (its records kept) and Causes (why it was kept or stood out)."""
        full = [p.step_summary.assign(process=p.label, rank=p.rank) for p in self.processes
                if getattr(p, "step_summary", None) is not None]
        if full:
            s = pd.concat(full, ignore_index=True)
            return s[["process", "rank", "pid", "step", "name", "start", "end", "HostNs", "tid",
                      "GpuBusyNs", "Kernels", "Syncs", "PageableCopies", "Detail", "Causes",
                      "EnergyJ", "MemAllocBytes", "MemPeakBytes", "TopLine"]]
        s = self._core()[4]
        if s.empty:
            return s
        s = s.assign(HostNs=s["end"] - s["start"])
        return s[["process", "rank", "pid", "step", "name", "start", "end", "HostNs", "tid"]]

    @property
    def gaps(self):
        """One row per GPU idle gap with its cause, per process (list, in process order): a
        frame, or for a streamed process a spill.SpilledGaps whose ``pieces()`` are frames."""
        return self._core()[2]

    def gap_pieces(self):
        """(process, frame of some of its gaps, its blocking calls), every gap once."""
        for p, gaps, blocking in zip(self.processes, self.gaps, self.blocking, strict=True):
            for g in pieces_of(gaps):
                yield p, g, blocking

    @property
    def blocking(self):
        return self._core()[3]

    @property
    def parts(self):
        """Per process and GPU: start-up, steps, teardown (or the run, without steps), each with
        the temporal measures and idle by cause; the findings read the steps part."""
        return _parts_columns(self._core()[5])

    @property
    def temporal(self):
        return _temporal_columns(self.run)

    @property
    def idle(self):
        return _idle_columns(self.run)

    @functools.cached_property
    def launch_stats(self):
        return attribution.kernel_launch_stats(self.processes, self.short_ns)

    @functools.cached_property
    def launch_summary(self):
        return attribution.launch_summary(self.processes, self.short_ns)

    @property
    def overlap(self):
        return _overlap(self.run)

    @property
    def stragglers(self):
        return _stragglers(self.run, self._core()[1])

    @functools.cached_property
    def lines(self):
        return attribution.top_lines(self.processes)

    @functools.cached_property
    def waits(self):
        return attribution.wait_lines(self.blocking, self.gaps)

    @functools.cached_property
    def ranges(self):
        return attribution.range_gpu_time(self.processes)

    @functools.cached_property
    def phases(self):
        return cpu.phases(self)

    @functools.cached_property
    def hot_lines(self):
        return cpu.hot_lines(self)

    def findings(self):
        if "findings" not in self._cache:
            self._cache["findings"] = rules.evaluate(self)
        return self._cache["findings"]

    def omitted(self, section: str) -> str | None:
        """One line saying why ``section`` has nothing to show (what was not recorded, the flag
        that records it), or None (rocpd.analysis.quiet)."""
        return quiet.omitted(self, section)

    def table(self, section: str):
        for name, attr, _ in SECTIONS:
            if name == section and attr:
                return getattr(self, attr)
        raise ValueError(f"unknown section {section!r}")


def analyze(db, step: str | None = None, comm_pattern: str = COMM_PATTERN,
            short_ns: int = SHORT_KERNEL_NS, stream_above: int | None = None,
            head: int | None = None, **filters) -> Analysis:
    """Load ``db`` (a Connection) once and return the :class:`Analysis`. ``step``: the ROCTx range
    that marks one step (its message, or the message without a trailing number); None detects it
    (:mod:`rocpd.analysis.steps`); "" turns steps off. ``stream_above``: a process with more
    kernel rows than that is swept in chunks, not held (:mod:`rocpd.analysis.streamed`; the
    tables are the same, ``gaps`` are read a piece at a time; ``head``: the first ops of each
    stream kept for a timeline); not with energy or GPU metrics, whose tables read every op."""
    meters, metrics = meter.read(db, **filters), gpu_metrics.source(db)
    if meters or metrics is not None:
        stream_above = None
    procs = load(db, comm_pattern=comm_pattern, stream_above=stream_above, **filters)
    attach_samples(db, procs)
    bounded.attach(db, procs)
    name, source = choose(procs, step)
    a = Analysis(procs, name, source, short_ns, collectives=calls(db), meters=meters,
                 gpu_metrics=metrics,
                 memory=memory_compute.analyze_if_any(db, procs, name, **filters), **drop_counts(db))
    if any(p.stream is not None for p in procs):
        streamed.run(a, head)  # now: the counts of the streamed processes are read from here on
    return a


def drop_counts(db) -> dict:
    """The records lost while profiling and, of them, the call-stack samples missed, with the
    samples taken: Analysis's fields, which the caveats (rules/caveats.py) word."""
    missed, taken = missed_and_taken(db)
    return {"dropped": db.dropped_total(), "samples_taken": taken, "samples_missed": missed}


def _of(x, **kw) -> Analysis:
    return x if isinstance(x, Analysis) else analyze(x, **kw)


def _temporal_columns(run):
    cols = ["process", "rank", "pid", "gpu", "SpanNs", "ComputeNs", "CommunicationNs", "MemoryNs",
            "IdleNs", "ComputePercent", "CommunicationPercent", "MemoryPercent", "IdlePercent",
            "Kernels", "Copies"]
    if run.empty:
        return pd.DataFrame(columns=cols)
    out = run.copy()
    span = out["SpanNs"].where(out["SpanNs"] > 0)
    for k in ("Compute", "Communication", "Memory", "Idle"):
        out[f"{k}Percent"] = (100.0 * out[f"{k}Ns"] / span).fillna(0.0)
    return out[cols]


def _parts_columns(rows):
    cols = ["process", "rank", "pid", "gpu", "part", "SpanNs", "ComputeNs", "CommunicationNs",
            "MemoryNs", "IdleNs", "HostLateNs", "SyncNs", "BetweenStepsNs", "OtherNs", "UnknownNs",
            "IdlePercent", "Kernels", "Copies", "start", "end"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    out = rows.copy()
    out["IdlePercent"] = (100.0 * out["IdleNs"] / out["SpanNs"].where(out["SpanNs"] > 0)).fillna(0.0)
    return out[cols]


def _idle_columns(run):
    cols = ["process", "rank", "pid", "gpu", "IdleNs", "HostLateNs", "SyncNs", "BetweenStepsNs",
            "OtherNs", "UnknownNs", "IdlePercent"]
    if run.empty:
        return pd.DataFrame(columns=cols)
    out = run.copy()
    out["IdlePercent"] = (100.0 * out["IdleNs"] / out["SpanNs"].where(out["SpanNs"] > 0)).fillna(0.0)
    return out[cols]


def _per_step_columns(rows):
    cols = ["process", "rank", "pid", "gpu", "step", "step_name", "HostNs", "SpanNs", "ComputeNs",
            "CommunicationNs", "MemoryNs", "IdleNs", "HostLateNs", "SyncNs", "OtherNs", "UnknownNs",
            "IdlePercent", "Kernels", "Copies", "host_start", "host_end", "start", "end"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    out = rows.copy()
    out["IdlePercent"] = (100.0 * out["IdleNs"] / out["SpanNs"].where(out["SpanNs"] > 0)).fillna(0.0)
    return out[cols]


def _overlap(run):
    cols = ["process", "rank", "pid", "gpu", "CommTotalNs", "ComputeNs", "OverlapNs",
            "OverlapPercent", "CommPercentOfBusy"]
    if run.empty:
        return pd.DataFrame(columns=cols)
    out = run.copy()
    out["OverlapPercent"] = (100.0 * out["OverlapNs"] / out["CommTotalNs"].where(out["CommTotalNs"] > 0))
    out["CommPercentOfBusy"] = (100.0 * out["CommTotalNs"] / out["BusyNs"].where(out["BusyNs"] > 0)).fillna(0.0)
    return out[cols]


def _stragglers(run, per_step):
    """Per process: mean compute (and communication) per step — over the run when there are no
    steps — against the median process. A straggler computes longest; the others wait for it
    inside their collectives."""
    cols = ["process", "rank", "pid", "gpu", "Steps", "ComputeNs", "CommunicationNs", "SpanNs",
            "ComputeVsMedianPercent"]
    if per_step is not None and len(per_step):
        src = per_step[per_step["SpanNs"] > 0]
        g = src.groupby(["process", "rank", "pid", "gpu"], dropna=False).agg(
            Steps=("step", "nunique"), ComputeNs=("ComputeNs", "mean"),
            CommunicationNs=("CommunicationNs", "mean"), SpanNs=("SpanNs", "mean")).reset_index()
    elif len(run):
        g = run[["process", "rank", "pid", "gpu", "ComputeNs", "CommunicationNs", "SpanNs"]].copy()
        g["Steps"] = 0
    else:
        return pd.DataFrame(columns=cols)
    med = g["ComputeNs"].median()
    g["ComputeVsMedianPercent"] = 100.0 * (g["ComputeNs"] - med) / med if med else 0.0
    return g.sort_values("ComputeVsMedianPercent", ascending=False, ignore_index=True)[cols]


# -- the same tables as functions of a Connection (or of an Analysis) ---------------------------
def step_ranges(db, **kw):
    return _of(db, **kw).steps


def temporal_breakdown(db, **kw):
    return _of(db, **kw).temporal


def idle_breakdown(db, **kw):
    return _of(db, **kw).idle


def step_breakdown(db, **kw):
    return _of(db, **kw).per_step


def kernel_launch_stats(db, **kw):
    return _of(db, **kw).launch_stats


def comm_overlap(db, **kw):
    return _of(db, **kw).overlap


def stragglers(db, **kw):  # noqa: F811 - the public name of _stragglers' table
    return _of(db, **kw).stragglers


def top_lines(db, **kw):
    return _of(db, **kw).lines


def wait_lines(db, **kw):
    return _of(db, **kw).waits


def range_gpu_time(db, **kw):
    return _of(db, **kw).ranges
