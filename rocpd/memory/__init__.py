"""GPU memory to the Python line: the timeline, the peak, the leaks, fragmentation and the
out-of-memory post-mortem, from the memory records of ``rocprof run --memory-allocation-trace``
(PyTorch's caching-allocator actions, each with its Python line, beside the runtime's
allocations; rocpd.memory.rows says which rows count).

    df = rocpd.memory(db)                       # what was live at each GPU's peak, by line
    df = rocpd.memory(db, view="leaks")         # lines whose live bytes grow step over step
    m = rocpd.memory.analyze(db)                # every table at once (m.peak, m.leaks, ...)

Views (each a DataFrame starting process, rank, pid, device):
- ``timeline``: allocated (live blocks), reserved (live segments) and held at the driver (live
  REAL allocations), the maximum of each in ``points`` equal slices of the run;
- ``steps``: the same per step (rocpd.analysis.steps: the given or detected ROCTx step range):
  allocated at its start and end, its growth, the peaks inside it;
- ``peak``: what was live at each device's peak of allocated, by line (LiveBytes, Blocks, share
  of the peak, kind); ``m.folded`` holds it as folded stacks for a flame graph;
- ``leaks``: lines whose live bytes at each step's end grow, with the growth per step (a robust
  slope, rocpd.memory.tables.LEAK_RULE);
- ``fragmentation``: at the peak, reserved - allocated and the largest free block inside the
  segments (the largest request that fits without a new segment);
- ``oom``: each out-of-memory: the request that failed, the driver's free bytes, the largest
  free block, with ``oom_live`` what was live then by line;
- ``summary``: the peaks and counts per device.

Memory: rows are read in time order through a cursor; what is kept is what is live (blocks,
segments), the per-line totals and one figure per step and slice. A database without GPU memory
records raises RocpdError with one line saying how to record them; ``rocpd memory DB...`` prints
the tables, ``rocpd report`` has a Memory section, ``rocpd diff`` compares the peak by line.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

from ..errors import RocpdError
from ..io.connection import Connection
from . import replay, rows, tables
from .tables import COLUMNS, KIND_RULE, LEAK_RULE

__all__ = ["memory", "analyze", "has_memory", "MemoryAnalysis", "VIEWS", "MISSING"]
VIEWS = ("peak", "timeline", "steps", "leaks", "fragmentation", "oom", "oom_live", "summary")
MISSING = ("no GPU memory records in these databases (record them with `rocprof run "
           "--memory-allocation-trace ...`: PyTorch's caching allocator and the runtime's "
           "allocations)")
POINTS = 500


@dataclass
class MemoryAnalysis:
    """Every table of rocpd.memory (see the package's text) and how they were made."""

    summary: object
    timeline: object
    steps: object
    peak: object
    leaks: object
    fragmentation: object
    oom: object
    oom_live: object
    folded: dict = field(default_factory=dict)  # "GPU 0;outer;...;inner" -> live bytes at the peak
    step_name: str | None = None
    sources: dict = field(default_factory=dict)  # process -> rocprof.memory.* metadata
    notes: list = field(default_factory=list)

    @property
    def has_lines(self) -> bool:
        """Whether any allocator event was recorded (else only the driver's allocations)."""
        return bool(len(self.summary)) and int(self.summary["AllocatorEvents"].sum()) > 0


def memory(db, view: str = "peak", step: str | None = None, points: int = POINTS, **filters):
    """One table (``view``, see the package's text) of ``db`` (a Connection or a path).
    ``step``: the ROCTx step range (None: detected; "": none). ``points``: slices of the
    timeline. ``filters``: as every rocpd table takes them (rank, pid, time window)."""
    if view not in VIEWS:
        raise RocpdError(f"view={view!r}: choose one of {', '.join(VIEWS)}")
    return getattr(analyze(db, step=step, points=points, **filters), view)


def analyze(db, step: str | None = None, points: int = POINTS, procs=None,
            step_name: str | None | bool = False, **filters) -> MemoryAnalysis:
    """Every table at once. ``procs``/``step_name``: the processes and step range an analysis
    already chose (rocpd.analysis), instead of loading and detecting them here."""
    db, opened = _open(db)
    try:
        out = _analyze(db, step, points, procs, step_name, **filters)
    finally:
        if opened:
            db.close()
    if out is None:
        raise RocpdError(MISSING)
    return out


def analyze_if_any(db, procs, step_name, **filters) -> MemoryAnalysis | None:
    """:func:`analyze` for databases with memory records, None for the others (the report)."""
    return _analyze(db, None, POINTS, procs, step_name, **filters)


def has_memory(db, **filters) -> bool:
    """Whether ``db`` holds GPU memory records that rocpd.memory counts."""
    db, opened = _open(db)
    try:
        return any(p.bounds()[2] for p in rows.parts(db, **filters))
    finally:
        if opened:
            db.close()


def _analyze(db, step, points, procs, step_name, **filters) -> MemoryAnalysis | None:
    parts = [(p, p.bounds()) for p in rows.parts(db, **filters)]
    parts = [(p, b) for p, b in parts if b[2]]
    if not parts:
        return None
    if procs is None:
        from ..analysis.activity import load
        from ..energy.tables import step_name as choose

        procs = load(db, **filters)
        step_name = choose(procs, step)
    elif step_name is False:
        step_name = None
    from ..analysis.steps import steps_of

    by_guid = {p.guid: p for p in procs}
    meta = rows.metadata(db)
    acc: dict[str, list] = {k: [] for k in COLUMNS}
    folded: dict[str, int] = {}
    sources, notes = {}, []
    for part, (lo, hi, _n, _blocks, _real) in parts:
        p = by_guid.get(part.guid)
        proc = {"process": p.label if p else part.guid, "rank": p.rank if p else None,
                "pid": p.pid if p else None, "gpu": _gpus(part)}
        st = steps_of(p, step_name) if (p is not None and step_name) else None
        rep = replay.Replay(part, lo, hi, points, st).run()
        rep.peaks = replay.Replay(part).at({a: d.peak[2] for a, d in rep.devices.items()})
        lines = tables.Lines(part.lines())
        for k, v in tables.frames_of(proc, rep, lines, st, step_name).items():
            acc[k] += v
        for k, v in tables.folded(proc, rep, lines, root=len(parts) > 1).items():
            folded[k] = folded.get(k, 0) + v
        m = meta.get(part.guid, {})
        sources[proc["process"]] = m
        if rep.unmatched:
            notes.append(f"{proc['process']}: {rep.unmatched} free(s) of an address not live"
                         " (allocated before the capture, or its allocation lost): not counted")
        dropped = m.get(rows.DROPPED_TAG, "0")
        if dropped not in ("0", ""):
            notes.append(f"{proc['process']}: {dropped} allocator event(s) dropped while"
                         " profiling: the figures undercount")
        if not _blocks and m.get(rows.SOURCE_TAG, "").startswith("none"):
            notes.append(f"{proc['process']}: no allocator events ({m[rows.SOURCE_TAG]});"
                         " only the driver's allocations")
    out = MemoryAnalysis(**{k: tables.frame(k, acc[k]) for k in COLUMNS}, folded=folded,
                         step_name=step_name, sources=sources, notes=notes)
    out.leaks.attrs["rules"] = [LEAK_RULE]
    out.peak.attrs["rules"] = [KIND_RULE]
    return out


def _gpus(part) -> dict[int, int]:
    """agent id -> the GPU's index, as rocpd.analysis numbers GPUs."""
    return {int(i): int(ix) for i, ix in part.conn.execute(
        "SELECT id, COALESCE(type_index, absolute_index, id) FROM rocpd_info_agent WHERE guid = ?",
        (part.guid,)) if i is not None and ix is not None}


def _open(x):
    if hasattr(x, "parts"):
        return x, False
    return Connection(*(x if isinstance(x, (list, tuple)) else [x])), True


class _CallableModule(types.ModuleType):
    """``rocpd.memory`` is this package and, called, :func:`memory`: ``rocpd.memory(db)`` as the
    API reads, while ``rocpd.memory.analyze`` and the modules stay importable."""

    def __call__(self, *args, **kwargs):
        return memory(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
