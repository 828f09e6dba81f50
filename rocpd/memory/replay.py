"""Replaying one process's memory rows (rocpd.memory.rows) in time order: what is live on each
device after every row, kept as running figures, never as a list of rows.

Live state: the allocator's blocks (address -> size, line, device), its segments and the
driver-level (REAL) allocations. A free is matched to its allocation by address (addresses are
unique across a process's devices); a free of an address not live (allocated before the capture
or lost) changes nothing and is counted in ``unmatched``. An allocation at an address still live
(its free lost) replaces it.

Pass 1 (:meth:`Replay.run`) keeps, per device: allocated (live block bytes), reserved (live
segment bytes), held at the driver (live REAL bytes), their peaks (the first time reached), an
envelope timeline (the maximum of each figure in each of ``points`` equal time slices), the
figures of each step (open at its start, closed at its end) with each line's live bytes at every
step's end (the leak table's input), and a snapshot at every out-of-memory row. Pass 2
(:meth:`Replay.at`) replays to given row numbers and snapshots each device's live bytes by line
and its free blocks there (the peak).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .rows import K_BLOCK, K_OOM, K_REAL, K_SEGMENT, device_free

# When a block live at a moment was allocated: before the first step (parameters, buffers, state
# made at start-up), in an earlier step (optimizer state, gradients or anything kept across
# steps), in the step under way (activations, temporaries, this step's gradients). Outside every
# step, what the steps allocated is "an earlier step".
SINCE = ("before the steps", "an earlier step", "this step")


@dataclass
class Device:
    agent: int
    allocated: int = 0
    reserved: int = 0
    driver: int = 0
    peak: list = field(default_factory=lambda: [0, None, -1])   # allocated: [bytes, t, row]
    peak_reserved: list = field(default_factory=lambda: [0, None])
    peak_driver: list = field(default_factory=lambda: [0, None])
    by_site: dict = field(default_factory=dict)  # site -> live block bytes
    events: int = 0      # allocator rows (blocks, segments, OOMs)
    real_events: int = 0
    first: int | None = None
    last: int | None = None
    tl: dict = field(default_factory=dict)       # slice -> [max alloc, max reserved, max driver, last x3]
    prev: tuple = (0, 0, 0)                      # the figures at the last row of the timeline


@dataclass
class Snapshot:
    """What was live on one device at one moment."""

    agent: int
    t: int
    allocated: int
    reserved: int
    driver: int
    by_site: dict            # (site, since) -> (bytes, blocks)
    free: dict               # largest free block, free bytes inside segments, segments
    request: int = 0         # out of memory: the failed request
    device_free: int | None = None
    site: int | None = None  # out of memory: the requesting line


class Replay:
    def __init__(self, part, t0: int = 0, t1: int = 0, points: int = 0, steps=None):
        self.part = part
        self.devices: dict[int, Device] = {}
        self.blocks: dict[int, tuple] = {}   # address -> (size, site, agent, step opened last)
        self.segments: dict[int, tuple[int, int]] = {}       # address -> (size, agent)
        self.real: dict[int, tuple[int, int]] = {}
        self.unmatched = 0
        self.t0, self.points = t0, points
        self.width = max(1, -(-(t1 - t0 + 1) // points)) if points else 1
        self.step_bounds = _bounds(steps)
        self.step_rows: dict[int, dict[int, dict]] = {}   # step -> agent -> figures
        self.step_lines: dict[int, dict[int, dict]] = {}  # step -> agent -> {site: bytes} at its end
        self.line_steps = _sampled(steps)  # the steps whose ends keep each line's bytes
        self.open_steps: set[int] = set()
        self.last_step = -1  # the step opened last (-1: before the first)
        self.ooms: list[Snapshot] = []
        self.peaks: dict[int, Snapshot] = {}  # pass 2: each device at its peak (set by the caller)

    # -- one row ---------------------------------------------------------------------------------
    def _device(self, agent) -> Device:
        d = self.devices.get(agent)
        if d is None:
            d = self.devices[agent] = Device(int(agent) if agent is not None else -1)
        return d

    def apply(self, t, kind, is_free, agent, address, size, site) -> Device | None:
        """Applies one row; the device it changed (None: nothing changed)."""
        if kind == K_BLOCK:
            old = self.blocks.pop(address, None)
            if old is not None:
                d = self._device(old[2])
                d.allocated -= old[0]
                left = d.by_site[old[1]] - old[0]
                if left:
                    d.by_site[old[1]] = left
                else:
                    del d.by_site[old[1]]
            elif is_free:
                self.unmatched += 1
                return None
            if not is_free:
                d = self._device(agent)
                self.blocks[address] = (size, site, d.agent, self.last_step)
                d.allocated += size
                d.by_site[site] = d.by_site.get(site, 0) + size
            d.events += 1
            return d
        if kind == K_SEGMENT or kind == K_REAL:
            live = self.segments if kind == K_SEGMENT else self.real
            old = live.pop(address, None)
            if old is not None:
                d = self._device(old[1])
                _held(d, kind, -old[0])
            elif is_free:
                self.unmatched += 1
                return None
            if not is_free:
                d = self._device(agent)
                live[address] = (size, d.agent)
                _held(d, kind, size)
            if kind == K_SEGMENT:
                d.events += 1
            else:
                d.real_events += 1
            return d
        if kind == K_OOM:
            d = self._device(agent)
            d.events += 1
            return d
        return None

    # -- pass 1 ----------------------------------------------------------------------------------
    def run(self) -> Replay:
        bounds, nb, b = self.step_bounds, len(self.step_bounds), 0
        for n, (t, kind, is_free, agent, address, size, site, ext) in enumerate(self.part.rows()):
            while b < nb and bounds[b][0] <= t:
                self._boundary(*bounds[b])
                b += 1
            d = self.apply(t, kind, is_free, agent, address, size, site)
            if d is None:
                continue
            if d.first is None:
                d.first = t
            d.last = t
            if d.allocated > d.peak[0]:
                d.peak = [d.allocated, t, n]
            if d.reserved > d.peak_reserved[0]:
                d.peak_reserved = [d.reserved, t]
            if d.driver > d.peak_driver[0]:
                d.peak_driver = [d.driver, t]
            if self.points:
                self._slice(d, t)
            for k in self.open_steps:
                self._step_update(k, d)
            if kind == K_OOM:
                self.ooms.append(self.snapshot(d, t, request=size, device_free=device_free(ext),
                                               site=site))
        while b < nb:
            self._boundary(*bounds[b])
            b += 1
        return self

    def _slice(self, d: Device, t: int) -> None:
        i = (t - self.t0) // self.width
        cur = (d.allocated, d.reserved, d.driver)
        s = d.tl.get(i)
        if s is None:  # the slice starts at the figures the device had before this row
            s = d.tl[i] = [*d.prev, *cur]
        for j in range(3):
            if cur[j] > s[j]:
                s[j] = cur[j]
            s[3 + j] = cur[j]
        d.prev = cur

    def _boundary(self, _t, is_end, k) -> None:
        if not is_end:
            self.last_step = k
            self.open_steps.add(k)
            self.step_rows[k] = {a: _figures(d) for a, d in self.devices.items()}
            return
        self.open_steps.discard(k)
        rows = self.step_rows.setdefault(k, {})
        for a, d in self.devices.items():
            rows.setdefault(a, _figures(d, start=0))["end"] = d.allocated
        if k in self.line_steps:
            self.step_lines[k] = {a: dict(d.by_site) for a, d in self.devices.items()}

    def _step_update(self, k, d: Device) -> None:
        r = self.step_rows[k].get(d.agent)
        if r is None:
            r = self.step_rows[k][d.agent] = _figures(d, start=0)
        r["peak"] = max(r["peak"], d.allocated)
        r["peak_reserved"] = max(r["peak_reserved"], d.reserved)
        r["peak_driver"] = max(r["peak_driver"], d.driver)

    # -- pass 2 ----------------------------------------------------------------------------------
    def at(self, marks: dict[int, int]) -> dict[int, Snapshot]:
        """Replays from the start to the rows ``marks`` (agent -> row number); each device's
        snapshot just after its row (a fresh state: call on a new Replay)."""
        want = {n: a for a, n in marks.items() if n >= 0}
        out: dict[int, Snapshot] = {}
        if not want:
            return out
        last = max(want)
        bounds, nb, b = self.step_bounds, len(self.step_bounds), 0
        for n, (t, kind, is_free, agent, address, size, site, _ext) in enumerate(self.part.rows()):
            while b < nb and bounds[b][0] <= t:
                self._boundary(*bounds[b])
                b += 1
            self.apply(t, kind, is_free, agent, address, size, site)
            a = want.get(n)
            if a is not None:
                out[a] = self.snapshot(self._device(a), t)
            if n >= last:
                break
        return out

    def _since(self, step: int) -> str:
        """When a block live now was allocated, against the steps: SINCE's words."""
        if not self.step_bounds:
            return ""
        if step < 0:
            return SINCE[0]
        return SINCE[2] if step == self.last_step and step in self.open_steps else SINCE[1]

    def snapshot(self, d: Device, t: int, **kw) -> Snapshot:
        counts: dict[int, list] = {}
        for size, site, agent, step in self.blocks.values():
            if agent == d.agent:
                c = counts.setdefault((site, self._since(step)), [0, 0])
                c[0] += size
                c[1] += 1
        return Snapshot(d.agent, t, d.allocated, d.reserved, d.driver,
                        {s: tuple(c) for s, c in counts.items()}, self.free_blocks(d.agent), **kw)

    def free_blocks(self, agent: int) -> dict:
        """The free space inside ``agent``'s segments: the largest free block (a gap between
        blocks, touching segments merged: expandable segments map pieces side by side), the free
        bytes in all, and how many segments."""
        segs = sorted((a, a + s) for a, (s, g) in self.segments.items() if g == agent)
        merged: list[list[int]] = []
        for lo, hi in segs:
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        blocks = sorted((a, a + v[0]) for a, v in self.blocks.items() if v[2] == agent)
        largest = free = 0
        i = 0
        for lo, hi in merged:
            cur = lo
            while i < len(blocks) and blocks[i][0] < hi:
                b_lo, b_hi = blocks[i]
                if b_lo >= cur:
                    gap = b_lo - cur
                    largest, free = max(largest, gap), free + gap
                cur = max(cur, b_hi)
                i += 1
            if hi > cur:
                largest, free = max(largest, hi - cur), free + hi - cur
        return {"largest": largest, "free": free, "segments": len(segs)}


def _held(d: Device, kind: int, delta: int) -> None:
    if kind == K_SEGMENT:
        d.reserved += delta
    else:
        d.driver += delta


def _figures(d: Device, start: int | None = None) -> dict:
    a = d.allocated if start is None else start
    return {"start": a, "end": a, "peak": d.allocated, "peak_reserved": d.reserved,
            "peak_driver": d.driver}


def _bounds(steps) -> list[tuple[int, bool, int]]:
    """Step opens and closes in time order (a close before an open at the same time)."""
    if steps is None or not len(steps):
        return []
    out = []
    for k, s, e in zip(steps["step"], steps["start"], steps["end"], strict=True):
        out.append((int(s), False, int(k)))
        out.append((int(e), True, int(k)))
    return sorted(out, key=lambda b: (b[0], not b[1]))


LINE_STEPS = 1000  # at most this many steps keep each line's bytes at their end (evenly chosen)


def _sampled(steps) -> set[int]:
    """The step numbers whose ends keep each line's live bytes: all of them up to LINE_STEPS,
    else LINE_STEPS evenly chosen (first and last included), so that a run of many steps keeps
    a bounded table for the leaks' slope."""
    if steps is None or not len(steps):
        return set()
    ks = [int(k) for k in steps["step"]]
    if len(ks) <= LINE_STEPS:
        return set(ks)
    pick = np.linspace(0, len(ks) - 1, LINE_STEPS).round().astype(int)
    return {ks[i] for i in pick}
