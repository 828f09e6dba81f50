"""A diff's side of a process the analysis swept (rocpd.analysis.streamed, a process of more
kernels than ``stream_above``): its ops are read again a chunk at a time (rocpd.analysis.chunks:
the chunks, concatenated, are the held ``p.gpu`` row for row) and only what the diff keeps of
them is held: the work per item, the phases and the measures per step (side.ops_tables of each
chunk, combined: sums, counts and first names in order of first appearance, as one groupby over
the whole gives them). The GPU idle is charged from the spilled gaps a piece at a time, each gap
to the step of the op that ends it, found in each GPU's ops by start as runs of one step (a few
per step, not one entry per op). The ops of one step (the median step's timeline) are read
again when asked for (:class:`Ops`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.spill import pieces_of
from ..analysis.steps import assign_times, times_of
from .side import _idle, _waits, finish, idle_tables, ops_tables, prepare_ops, whole_run


def proc(p, st, gaps, blocking, step_name, skip):
    """side.proc's ProcSteps for swept process ``p``: the same tables."""
    if st is not None and not st.empty:
        steps, whole = whole_run(p, st, skip, None)
        return _proc(p, steps, False, len(st), gaps, blocking, step_name)
    # No steps: the run is one step from the first launch to the last end, which every op's
    # launch lies in; its bounds come from the same pass.
    got = _proc(p, None, True, 1, gaps, blocking, step_name)
    if got is None:  # a launch after the last end (not written so): assigned as held
        steps, _ = whole_run(p, None, skip, _span_of(p))
        got = _proc(p, steps, True, 1, gaps, blocking, step_name)
    return got


def _proc(p, steps, whole, total, gaps, blocking, step_name):
    parts, nxt, span = [], NextStep(p), None
    for chunk in p.stream.frames(label=f"comparing {p.label}"):
        times = times_of(chunk)
        if steps is None:
            step_of = np.zeros(len(chunk), dtype=np.int64)
            span = _span(chunk, times, span)
        else:
            step_of = assign_times(times, steps)
        nxt.feed(chunk, step_of)
        ops = prepare_ops(p, chunk, step_of, times, step_name)
        if len(ops):
            parts.append(ops_tables(ops))
        last = chunk
    if steps is None:
        if span is None or span[2] >= span[1] + 1:
            return None
        steps, _ = whole_run(p, None, 0, span[:2])
    steps["HostNs"] = steps["end"] - steps["start"]
    empty = prepare_ops(p, last.iloc[:0], np.zeros(0, dtype=np.int64), np.zeros(0, np.int64),
                        step_name)
    t = _combined(parts) if parts else ops_tables(empty)
    waits = _waits(blocking, steps)
    idle = [x for x in (idle_tables(_idle(g, steps, blocking, nxt))
                        for g in pieces_of(gaps)) if x is not None]
    idle = _combined_idle(idle) if idle else None
    return finish(p, steps, whole, total, Ops(p, steps, step_name, empty), t, waits, idle)


def _span(chunk, times, span):
    """(first launch, last end, last launch) so far: gpu_span's bounds and the check that every
    launch lies before the end."""
    end = chunk["end"]
    lo = int(times.min())
    hi = int(max(end.max(), chunk["launch_end"].fillna(end).max()))
    tmax = int(times.max())
    if span is None:
        return lo, hi, tmax
    return min(span[0], lo), max(span[1], hi), max(span[2], tmax)


def _span_of(p):
    span = None
    for chunk in p.stream.frames():
        span = _span(chunk, times_of(chunk), span)
    return span[:2]


def _combined(parts: list) -> dict:
    keys = ["step", "line", "kind", "key", "memory"]
    work = pd.concat([t["work"] for t in parts], ignore_index=True).groupby(
        keys, sort=False).agg(ns=("ns", "sum"), count=("count", "sum"),
                              name=("name", "first")).reset_index()
    phases = pd.concat([t["phases"] for t in parts], ignore_index=True).groupby(
        ["step", "phase"]).agg(ns=("ns", "sum")).reset_index()
    out = {"work": work, "phases": phases}
    for k in ("busy", "compute", "kernels", "copies"):
        out[k] = _summed([t[k] for t in parts])
    return out


def _summed(series: list):
    full = [s for s in series if len(s)]
    if not full:
        return series[0]
    return pd.concat(full).groupby(level=0).sum()


def _combined_idle(parts: list):
    work = pd.concat([w for w, _ in parts], ignore_index=True).groupby(
        ["step", "line", "kind", "key"], sort=False).agg(
        ns=("ns", "sum"), count=("count", "sum"), name=("name", "first")).reset_index()
    return work, _summed([s for _, s in parts])


class NextStep:
    """For side._idle: (gpu, gap ends) -> the step of the first op on that GPU starting at or
    after each end (-1: none, or an op outside every step). Each GPU's ops, in start order, are
    kept as runs of one step: the last start of each run and its step."""

    def __init__(self, p):
        self.gpu_of = {int(k): v[0] for k, v in p.agents.items()}
        self.runs: dict = {}  # gpu -> [last starts, steps] lists of arrays
        self._done: dict = {}

    def feed(self, chunk, step_of) -> None:
        agent = chunk["agent"].to_numpy()
        starts = chunk["start"].to_numpy(dtype=np.int64)
        for a in pd.unique(agent):
            m = agent == a
            gpu = self.gpu_of.get(int(a), int(a))
            s, k = starts[m], step_of[m]
            ends = np.append(np.flatnonzero(k[1:] != k[:-1]), len(k) - 1)
            last, st = s[ends], k[ends]
            runs = self.runs.setdefault(gpu, [[], []])
            if runs[1] and runs[1][-1][-1] == st[0]:  # the previous chunk's last run goes on
                runs[0][-1] = np.append(runs[0][-1][:-1], last[0])
                last, st = last[1:], st[1:]
            if len(st):  # (the last arrays are never empty: the check above reads them)
                runs[0].append(last)
                runs[1].append(st)
        self._done.clear()

    def __call__(self, gpu, ge):
        if gpu not in self._done:
            runs = self.runs.get(gpu, [[], []])
            self._done[gpu] = (np.concatenate(runs[0]) if runs[0] else np.zeros(0, np.int64),
                               np.concatenate(runs[1]) if runs[1] else np.zeros(0, np.int64))
        last, st = self._done[gpu]
        r = np.searchsorted(last, ge, side="left")
        ok = r < last.size
        k = np.full(ge.size, -1)
        k[ok] = st[r[ok]]
        return k


class Ops:
    """A swept process's kept ops, read again a step at a time (``of_step``) for the median
    step's timeline: the rows the held frame has for that step (index from 0)."""

    def __init__(self, p, steps, step_name, empty):
        self.p, self.steps, self.step_name, self.empty = p, steps, step_name, empty
        self.offset = 0  # side.ProcSteps.shift: the runs of a side numbered one after another

    def of_step(self, step: int):
        k = step - self.offset
        got = []
        for chunk in self.p.stream.frames():
            times = times_of(chunk)
            step_of = assign_times(times, self.steps)
            m = step_of == k
            if m.any():
                got.append(prepare_ops(self.p, chunk[m].reset_index(drop=True), step_of[m],
                                       times[m], self.step_name))
        ops = pd.concat(got, ignore_index=True) if got else self.empty.copy()
        ops["step"] = ops["step"].to_numpy(dtype=np.int64) + self.offset
        return ops
