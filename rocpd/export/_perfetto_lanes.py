"""The lane sweep of a Perfetto track: its slices into lanes in which they nest, a slice that
does not nest going to the next lane in which it does (lane 0 the track, the others its
"(overlap N)" tracks). held_lanes sweeps every slice of a track at once; Lanes sweeps slices that
arrive a chunk at a time, per track, in (start, longer first, arrival) order: the same lanes and
each lane's events in the same order, with each event's place in its lane.

A lane's events come out in time order (a slice ends at or after it starts), so an end may be
given out as soon as no later slice can come before it: :meth:`Lanes.settle` gives out every end
at or before a time that every later slice starts at or after (the held sweep pops those ends
when it next looks at that lane, before anything else enters it). A track whose slices follow one
another (each starting after the one before and at or after its end) is swept with numpy; any
other chunk of a track with a loop per slice, as the held sweep.
"""

from __future__ import annotations

from array import array

import numpy as np

_HELD_CHUNK = 1 << 10  # slices turned into Python integers at a time


def held_lanes(start: np.ndarray, end: np.ndarray, ids: np.ndarray | None = None) -> list[tuple]:
    """Split slices (their start and end times) into lanes in which they nest; per lane, its
    events in track order as two arrays, (times, codes): a code is 2 * the slice's id (its
    position, or its number in ``ids``) + 1 for its begin, + 0 for its end."""
    order = np.lexsort((-end, start))  # by start, the longer first; stable as sorted()
    ids = order if ids is None else ids[order]
    stacks: list[list] = []  # per lane: stack of (end, id)
    out: list[tuple[array, array]] = []
    for k in range(0, len(order), _HELD_CHUNK):
        o = order[k:k + _HELD_CHUNK]
        for s, e, i in zip(start[o].tolist(), end[o].tolist(), ids[k:k + _HELD_CHUNK].tolist(),
                           strict=True):
            for lane, stack in enumerate(stacks):
                while stack and stack[-1][0] <= s:
                    t, j = stack.pop()
                    out[lane][0].append(t)
                    out[lane][1].append(2 * j)
                if not stack or e <= stack[-1][0]:
                    break
            else:
                stacks.append([])
                out.append((array("q"), array("q")))
                lane = len(stacks) - 1
            stacks[lane].append((e, i))
            out[lane][0].append(s)
            out[lane][1].append(2 * i + 1)
    for lane, stack in enumerate(stacks):
        while stack:
            t, j = stack.pop()
            out[lane][0].append(t)
            out[lane][1].append(2 * j)
    return out


class Lanes:
    """Every track's lanes: per track uuid, a stack of ends per lane and each lane's next place."""

    def __init__(self):
        self.stacks: dict = {}  # uuid -> [[end, ...] per lane]
        self.next: dict = {}  # uuid -> [next place per lane]
        self.b: list = []  # begins given out: (ts, track, lane, place, op) arrays
        self.e: list = []  # ends given out: (ts, track, lane, place) arrays

    def lanes(self, uuid: int) -> int:
        return len(self.stacks.get(uuid, [[]]))

    def feed(self, uuid: int, start: np.ndarray, end: np.ndarray, op: np.ndarray) -> None:
        """One track's slices of a chunk, sorted; ``op``: their numbers in the chunk."""
        stacks = self.stacks.setdefault(uuid, [[]])
        nxt = self.next.setdefault(uuid, [0])
        m = len(start)
        if not m:
            return
        follow = (len(stacks) == 1 and (not stacks[0] or start[0] >= stacks[0][-1])
                  and (m == 1 or ((start[1:] > start[:-1]) & (start[1:] >= end[:-1])).all()))
        if follow:
            c = nxt[0]
            if stacks[0]:  # the slice before, still open: it ends first
                self._ends(uuid, [stacks[0].pop()], [0], [c])
                c += 1
            k = np.arange(m, dtype=np.int64)
            self.b.append((start, np.full(m, uuid), np.zeros(m, np.int64), c + 2 * k, op))
            if m > 1:
                self.e.append((end[:-1], np.full(m - 1, uuid), np.zeros(m - 1, np.int64),
                               c + 2 * k[:-1] + 1))
            stacks[0].append(int(end[-1]))
            nxt[0] = c + 2 * m - 1
            return
        bt, bl, bp, bo = [], [], [], []
        et, el, ep = [], [], []
        for s, e, o in zip(start.tolist(), end.tolist(), op.tolist(), strict=True):
            for lane, stack in enumerate(stacks):
                while stack and stack[-1] <= s:
                    et.append(stack.pop())
                    el.append(lane)
                    ep.append(nxt[lane])
                    nxt[lane] += 1
                if not stack or e <= stack[-1]:
                    break
            else:
                stacks.append([])
                nxt.append(0)
                lane = len(stacks) - 1
            stacks[lane].append(e)
            bt.append(s)
            bl.append(lane)
            bp.append(nxt[lane])
            bo.append(o)
            nxt[lane] += 1
        self.b.append((np.array(bt, np.int64), np.full(len(bt), uuid), np.array(bl, np.int64),
                       np.array(bp, np.int64), np.array(bo, np.int64)))
        self._ends(uuid, et, el, ep)

    def _ends(self, uuid, t, lane, place) -> None:
        if len(t):
            self.e.append((np.array(t, np.int64), np.full(len(t), uuid),
                           np.array(lane, np.int64), np.array(place, np.int64)))

    def settle(self, limit: int | None) -> None:
        """Give out every end at or before ``limit`` (None: every end left), top of a stack
        first, as the held sweep pops them."""
        for uuid, stacks in self.stacks.items():
            nxt = self.next[uuid]
            t, ln, pl = [], [], []
            for lane, stack in enumerate(stacks):
                while stack and (limit is None or stack[-1] <= limit):
                    t.append(stack.pop())
                    ln.append(lane)
                    pl.append(nxt[lane])
                    nxt[lane] += 1
            self._ends(uuid, t, ln, pl)

    def take(self):
        """The begins and ends given out since the last take, each as concatenated arrays."""
        b = [np.concatenate(c) for c in zip(*self.b, strict=True)] if self.b else [np.zeros(0, np.int64)] * 5
        e = [np.concatenate(c) for c in zip(*self.e, strict=True)] if self.e else [np.zeros(0, np.int64)] * 4
        self.b, self.e = [], []
        return b, e
