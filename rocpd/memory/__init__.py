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

from ..errors import RocpdError
from . import compute, replay, rows, tables
from .compute import MISSING, POINTS, MemoryAnalysis, analyze, open_db

__all__ = ["memory", "analyze", "has_memory", "MemoryAnalysis", "VIEWS", "MISSING", "POINTS",
           "compute", "replay", "rows", "tables"]
VIEWS = ("peak", "timeline", "steps", "leaks", "fragmentation", "oom", "oom_live", "summary")


def memory(db, view: str = "peak", step: str | None = None, points: int = POINTS, **filters):
    """One table (``view``, see the package's text) of ``db`` (a Connection or a path).
    ``step``: the ROCTx step range (None: detected; "": none). ``points``: slices of the
    timeline. ``filters``: as every rocpd table takes them (rank, pid, time window)."""
    if view not in VIEWS:
        raise RocpdError(f"view={view!r}: choose one of {', '.join(VIEWS)}")
    return getattr(analyze(db, step=step, points=points, **filters), view)


def has_memory(db, **filters) -> bool:
    """Whether ``db`` holds GPU memory records that rocpd.memory counts."""
    db, opened = open_db(db)
    try:
        return any(p.bounds()[2] for p in rows.parts(db, **filters))
    finally:
        if opened:
            db.close()


class _CallableModule(types.ModuleType):
    """``rocpd.memory`` is this package and, called, :func:`memory`: ``rocpd.memory(db)`` as the
    API reads, while ``rocpd.memory.analyze`` and the modules stay importable."""

    def __call__(self, *args, **kwargs):
        return memory(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
