"""rocpd.memory's tables of one set of databases at once (see the package's text): the rows of
each process replayed (rocpd.memory.replay) against its steps (rocpd.analysis.steps), then
tabled (rocpd.memory.tables)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.steps import step_name as chosen_step
from ..analysis.steps import steps_of
from ..errors import RocpdError
from ..io.connection import Connection
from . import replay, rows, step_ranges, tables
from .tables import COLUMNS, KIND_RULE, LEAK_RULE

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


def analyze(db, step: str | None = None, points: int = POINTS, procs=None,
            step_name: str | None | bool = False, **filters) -> MemoryAnalysis:
    """Every table at once. ``procs``/``step_name``: the processes and step range an analysis
    already chose (rocpd.analysis), instead of loading and detecting them here."""
    db, opened = open_db(db)
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


def _analyze(db, step, points, procs, step_name, **filters) -> MemoryAnalysis | None:
    parts = [(p, p.bounds()) for p in rows.parts(db, **filters)]
    parts = [(p, b) for p, b in parts if b[2]]
    if not parts:
        return None
    if procs is None:
        procs = step_ranges.processes(db, **filters)
        step_name = chosen_step(procs, step)
    elif step_name is False:
        step_name = None
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
        rep.peaks = replay.Replay(part, steps=st).at({a: d.peak[2] for a, d in rep.devices.items()})
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
    return GpuIndex({int(i): int(ix) for i, ix in part.conn.execute(
        "SELECT id, COALESCE(type_index, absolute_index, id) FROM rocpd_info_agent WHERE guid = ?",
        (part.guid,)) if i is not None and ix is not None})


class GpuIndex(dict):
    """A GPU whose agent row is missing (a run whose only GPU records are the allocator's, as a
    CPU stand-in makes): rocprof's writer numbers GPU n as agent 2 + n (rocprof/info.hpp)."""

    def __missing__(self, agent):
        return agent - 2 if isinstance(agent, int) and agent >= 2 else agent


def open_db(x):
    if hasattr(x, "parts"):
        return x, False
    return Connection(*(x if isinstance(x, (list, tuple)) else [x])), True
