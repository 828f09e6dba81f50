"""GPU memory records for test databases, as the capture writes them (docs/memory.md): PyTorch's
caching-allocator actions as rocpd_memory_allocate rows of level 'VIRTUAL' under the categories
TORCH_ALLOCATOR_BLOCK / _SEGMENT / _OOM, each with the Python line of its call as kernels carry
it, and the runtime's allocations as level 'REAL' rows (category MEMORY_ALLOCATION).

    b = DatabaseBuilder(path)
    mem = AllocatorTrace(b)                      # a stand-in for the allocator hook
    mem.segment(t, 0x1000_0000, 20 << 20)        # reserved (and the driver's cudaMalloc under it)
    mem.block(t, 0x1000_0000, 4 << 20, site=("train.py", 12, "step"))
    mem.block(t2, 0x1000_0000, 4 << 20, free=True)
    mem.oom(t3, 8 << 30, device_free=1 << 30, site=("train.py", 40, "main"))
    mem.close()                                  # closes the builder too

Rows go through the project's writer (DatabaseBuilder). Where that writer takes no call site or
extdata for an allocation row, the line ({"site": id} on the row's event, as kernels hold it) and
the OOM's extdata (on the row) are set after the writer closed the file, the values the capture
writes; nothing else is touched.
"""

from __future__ import annotations

import json
import sqlite3

from .._schema import suffix_of
from .builder import DatabaseBuilder, gpu_agent

BLOCK, SEGMENT, OOM = "TORCH_ALLOCATOR_BLOCK", "TORCH_ALLOCATOR_SEGMENT", "TORCH_ALLOCATOR_OOM"


class AllocatorTrace:
    def __init__(self, b: DatabaseBuilder, source: str = "torch-caching-allocator",
                 dropped: int = 0):
        self.b = b
        self.count = 0
        self.dropped = dropped
        self.source = source
        self._patch: list[tuple[int, str, str]] = []   # (correlation id, call_stack, extdata)
        self._sites: dict[tuple, str] = {}             # site -> its first frame's JSON

    def _row(self, category, type_, t, size, address, agent, site, extdata, stream=0, end=None):
        corr = self.b.next_correlation()
        self.b._w.allocation(type_, t, t if end is None else end, size, tid=self.b.pid,
                             agent=gpu_agent(0) if agent is None else agent,
                             level="VIRTUAL" if category != "MEMORY_ALLOCATION" else "REAL",
                             address=address, stream=self.b.stream(stream), correlation_id=corr,
                             category=category)
        if category != "MEMORY_ALLOCATION":
            self.count += 1
        if site or extdata:
            frame = None
            if site:
                self.b.callsite(site)
                f, n, fn, *op = site
                frame = json.dumps({"file": f, "line": int(n), "function": fn,
                                    **({"backward_of": op[0]} if op else {})},
                                   separators=(",", ":"))
            self._patch.append((corr, frame, extdata))

    def block(self, t, address, size, site=None, free=False, agent=None, stream=0):
        """A block handed out (ALLOC) or given back (FREE: torch's allocated bytes drop)."""
        self._row(BLOCK, "FREE" if free else "ALLOC", t, size, address, agent,
                  None if free else site, None, stream)

    def segment(self, t, address, size, free=False, agent=None, real=True):
        """A segment reserved (or released) by the allocator; ``real``: with the driver's own
        allocation under it (cudaMalloc/cudaFree, a REAL row), as CUPTI records it."""
        self._row(SEGMENT, "FREE" if free else "ALLOC", t, size, address, agent, None, None)
        if real:
            self.real(t, address, size, free=free, agent=agent)

    def real(self, t, address, size, free=False, agent=None, duration=1000):
        """A runtime allocation or free (level 'REAL', category MEMORY_ALLOCATION): cudaMalloc,
        NCCL's buffers. Its call runs from ``t`` - ``duration`` (an allocation: it counts when
        it returns, at ``t``) or from ``t`` (a free)."""
        start, end = (t, t + duration) if free else (t - duration, t)
        self._row("MEMORY_ALLOCATION", "FREE" if free else "ALLOC", start, size, address, agent,
                  None, None, end=end)

    def oom(self, t, size, device_free, site=None, agent=None):
        """An out-of-memory: ``size`` the request that failed."""
        self._row(OOM, "ALLOC", t, size, 0, agent, site,
                  json.dumps({"device_free": int(device_free)}, separators=(",", ":")))

    def close(self, end: int = 0) -> str:
        self.b.metadata("rocprof.memory.source", self.source)
        self.b.metadata("rocprof.memory.allocator_events", self.count)
        self.b.metadata("rocprof.memory.dropped", self.dropped)
        path = self.b.close(end)
        self._apply()
        return path

    def _apply(self) -> None:
        if not self._patch:
            return
        suffix = suffix_of(self.b.guid)
        con = sqlite3.connect(self.b.path)
        try:
            ev, st = f"rocpd_event{suffix}", f"rocpd_string{suffix}"
            alloc = f"rocpd_memory_allocate{suffix}"
            nodes = {cs: i for i, cs in con.execute(
                f"SELECT E.id, E.call_stack FROM {ev} E JOIN {st} S ON S.id = E.category_id"
                " WHERE S.string = 'PYTHON_LAUNCH_SITE'")}
            ids = dict(con.execute(
                f"SELECT E.correlation_id, E.id FROM {ev} E JOIN {st} S ON S.id = E.category_id"
                " WHERE S.string LIKE 'TORCH_ALLOCATOR_%'"))
            for corr, frame, extdata in self._patch:
                if frame is not None:
                    node = next((i for cs, i in nodes.items() if cs and cs.startswith(f"[{frame}")),
                                None)
                    assert node is not None, f"no launch-site node for {frame}"
                    con.execute(f"UPDATE {ev} SET call_stack = ? WHERE id = ?",
                                (json.dumps({"site": node}, separators=(",", ":")), ids[corr]))
                if extdata is not None:  # the row's own extdata, as the writer stores it
                    con.execute(f"UPDATE {alloc} SET extdata = ? WHERE event_id = ?",
                                (extdata, ids[corr]))
            con.commit()
        finally:
            con.close()
