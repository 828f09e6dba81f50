"""The OTF2 archive's events, written as they are read: each kind of record comes from SQLite in
(start, longer first) order, the kinds are merged in the order the held writer collected them
(regions, ROCTx marks, samples, allocations, GPU work, scratch memory), and each location sweeps
its slices into lanes as rocpd.export.perfetto._lanes does (a slice that does not nest goes to
the location's next "(overlap N)" lane), writing each Enter and Leave as soon as it is known.
Nothing is held per record but the open slices of each lane.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from . import _activity as act

# Categories of what is not an API call (rocpd.export.otf2 names regions by them).
KERNEL, COPY, MARK, SAMPLE, SCRATCH = "KERNEL_DISPATCH", "MEMORY_COPY", "MARK", "SAMPLE", \
    "SCRATCH_MEMORY"
ALLOC = {"ALLOC": "MEMORY_ALLOCATION_ALLOCATE", "REALLOC": "MEMORY_ALLOCATION_REALLOCATE",
         "FREE": "MEMORY_ALLOCATION_FREE"}


def _longer_first(rows: Iterator[tuple]) -> Iterator[tuple]:
    """Rows in start order re-ordered, among those of one start, by their end, later first
    (stable): the order the lane sweep takes them in."""
    run: list[tuple] = []
    for r in rows:
        if run and r[0] != run[0][0]:
            yield from sorted(run, key=lambda x: -x[1]) if len(run) > 1 else run
            run = []
        run.append(r)
    yield from sorted(run, key=lambda x: -x[1]) if len(run) > 1 else run


def records(conn, where: str, params: list, flt, agent_index: str) -> Iterator[tuple]:
    """(start, end, location key, name or frames, category) of every record of one file that
    the archive draws, in the order the lane sweep takes them."""
    regions = ((start, end, ("t", g, pid, tid, ""), name or "(unknown)", cat)
               for g, cat, name, pid, tid, _s, start, end in act.regions_by_start(conn, where,
                                                                                 params))
    marks = ((ts, ts, ("t", g, pid, tid, ""), name or "(mark)", MARK)
             for g, _c, name, pid, tid, ts in act.marks(conn, where, params))
    samples = ((ts, ts, ("t", g, pid, tid, ""), *((frames, SAMPLE) if frames else (name, MARK)))
               for g, _c, name, pid, tid, ts, frames in act.samples(conn, where, params))
    allocations = ((start, end, ("t", g, pid, tid, ", memory"), ALLOC[typ], typ)
                   for g, pid, typ, start, end, tid in conn.execute(
                       f'SELECT guid, pid, type, start, "end", tid FROM memory_allocations'
                       f" WHERE {where} AND level IS NOT 'SCRATCH' AND type IN ('ALLOC',"
                       f" 'REALLOC', 'FREE') ORDER BY start, \"end\" DESC, id", params))
    gpu = _longer_first(
        (start, end, ("s", g, pid, label, sid), name or "(unknown)",
         KERNEL if kind == "kernel" else COPY)
        for kind, g, name, pid, _a, label, sid, _st, _k, start, end in act.gpu_activity(
            conn, where, params, flt, agent_index))
    scratch = _longer_first((start, end, ("scratch", g, pid, label), op, SCRATCH)
                            for g, pid, label, op, start, end, _size in act.scratch(
                                conn, where, params, agent_index))
    # Stable among the kinds: at one (start, end), in the order the held writer collected them.
    return heapq.merge(regions, marks, samples, allocations, gpu, scratch,
                       key=lambda r: (r[0], -r[1]))


class Location:
    """One location's lanes: lane 0 is the location, lane k its "(overlap k)" location, each an
    OTF2 event writer made when its first slice comes; per lane, the ends of its open slices."""

    def __init__(self, make_writer, region, sample):
        self.make_writer, self.region, self.sample_of = make_writer, region, sample
        self.writers = [make_writer(0)]
        self.stacks: list[list] = [[]]  # per lane: [(end, region), ...], innermost last

    def _pop(self, lane: int, upto: int) -> None:
        stack, w = self.stacks[lane], self.writers[lane]
        while stack and stack[-1][0] <= upto:
            t, r = stack.pop()
            w.leave(t, r)

    def slice(self, start: int, end: int, name: str, cat: str) -> None:
        for lane, stack in enumerate(self.stacks):
            self._pop(lane, start)
            if not stack or end <= stack[-1][0]:
                break
        else:
            self.stacks.append([])
            self.writers.append(self.make_writer(len(self.stacks) - 1))
            lane = len(self.stacks) - 1
        r = self.region(name, cat)
        self.stacks[lane].append((end, r))
        self.writers[lane].enter(start, r)

    def sample(self, ts: int, frames) -> None:
        """A call-stack sample, on lane 0 after every end there at or before it."""
        self._pop(0, ts)
        self.sample_of(self.writers[0], ts, frames)

    def close(self) -> None:
        for lane in range(len(self.stacks)):
            self._pop(lane, 1 << 63)
