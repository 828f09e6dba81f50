"""The breakdown of one GPU of one process (rocpd.analysis.breakdown's run, step and part rows and
its gaps) swept over its ops in time order a chunk at a time, for a process too big to hold.

The ops are cut into pieces where the GPU goes idle: at an op of positive length that starts
after every op before it has ended (no busy interval and no idle gap spans the cut). Busy time
inside any window is then the sum of each piece's, each gap lies in one piece (the gap at a cut
belongs to the piece before it, classified by the op that ends it, which is handed along), and
the step and part windows are known before the sweep (step windows from a first pass, parts
from them; a window still open at the end is measured up to "far", which no op reaches). What
breakdown.analyze_process computes from every row at once is so summed exactly, integer for
integer; the gap rows go to a sink (spill.SpilledGaps) a piece at a time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import intervals as iv
from .breakdown import CAUSES, _cause_sets, _classify_gaps, _gap_step, _objects, _sets
from .gpuload import same, text_is
from .steps import assign_times, times_of

FAR = np.iinfo(np.int64).max // 4  # the end of a window whose end is not known yet
_SETS = ("C", "M", "CM", "B")


def measures(cov: dict, span) -> dict:
    """breakdown._measures from the covered time of each set."""
    c, m, cm, b = (cov[k] for k in _SETS)
    return {"SpanNs": span, "ComputeNs": c, "CommunicationNs": cm - c, "MemoryNs": b - cm,
            "IdleNs": span - b, "BusyNs": b, "CommTotalNs": m, "OverlapNs": m + c - cm}


class StepWindows:
    """A first pass: each step's window on one GPU (breakdown._step_windows), op chunk by chunk."""

    def __init__(self, n_steps: int):
        self.w0 = np.full(n_steps, np.iinfo(np.int64).max, dtype=np.int64)
        self.w1 = np.zeros(n_steps, dtype=np.int64)

    def feed(self, ops, step_of) -> None:
        m = step_of >= 0
        if m.any():
            np.minimum.at(self.w0, step_of[m], ops["start"].to_numpy()[m])
            np.maximum.at(self.w1, step_of[m], ops["end"].to_numpy()[m])

    def windows(self) -> tuple[np.ndarray, np.ndarray]:
        w0, w1 = self.w0.copy(), self.w1.copy()
        w0[w1 == 0] = 0
        used = np.flatnonzero(w1 > w0)
        order = used[np.argsort(w0[used], kind="stable")]
        if order.size > 1:
            w1[order[:-1]] = np.maximum(w0[order[:-1]], np.minimum(w1[order[:-1]], w0[order[1:]]))
        return w0, w1


class GpuSweep:
    """Run, step and part rows of one GPU, fed its ops in time order (any number at a time)."""

    def __init__(self, p, gpu_index: int, steps, w0, w1, blocking, sink):
        self.base = {"process": p.label, "rank": p.rank, "pid": p.pid, "gpu": gpu_index}
        self.steps, self.w0, self.w1, self.blocking, self.sink = steps, w0, w1, blocking, sink
        self.n = len(steps)
        self.in_step = iv.union(w0, w1)
        used = w1 > w0
        self.bounds = (int(w0[used].min()), int(w1[used].max())) if used.any() else None
        self.carry = None
        self.lo = self.hi = None
        self.run = dict.fromkeys(_SETS, 0)
        self.cause = dict.fromkeys(CAUSES, 0)
        self.cause_out = dict.fromkeys(CAUSES, 0)  # the part of each cause between steps
        self.between = 0
        self.counts = np.zeros(2, dtype=np.int64)  # kernels, copies
        z = np.zeros(self.n, dtype=np.int64)
        self.step_cov = {k: z.copy() for k in _SETS}
        self.step_idle = {c: z.copy() for c in CAUSES}
        self.step_counts = np.zeros((2, self.n), dtype=np.int64)

    def _start(self, lo: int) -> None:
        self.lo = self.hi = lo
        if self.bounds:
            s0, s1 = self.bounds
            self.parts = [("startup", lo, s0), ("steps", s0, s1), ("teardown", s1, FAR)]
        else:
            self.parts = [("run", lo, FAR)]
        k = len(self.parts)
        self.a0 = np.array([b[1] for b in self.parts], dtype=np.int64)
        self.a1 = np.array([b[2] for b in self.parts], dtype=np.int64)
        self.outside = iv.gaps(self.in_step, lo, FAR)
        self.part_cov = {s: np.zeros(k, dtype=np.int64) for s in _SETS}
        self.part_idle = {c: np.zeros(k, dtype=np.int64) for c in CAUSES}
        self.part_between = np.zeros(k, dtype=np.int64)
        self.part_counts = np.zeros((2, k), dtype=np.int64)
        self.at_end = np.zeros(2, dtype=np.int64)  # ops starting where the steps part ends

    def feed(self, ops) -> None:
        if ops.empty:
            return
        if self.carry is not None:
            ops = pd.concat([self.carry, ops], ignore_index=True)
        else:
            ops = ops.reset_index(drop=True)
        if self.lo is None:
            self._start(int(ops["start"].iloc[0]))
        s, e = ops["start"].to_numpy(), ops["end"].to_numpy()
        reach = np.maximum.accumulate(e)
        cuts = np.flatnonzero((s[1:] > reach[:-1]) & (e[1:] > s[1:])) + 1
        if cuts.size == 0:
            self.carry = ops
            return
        i = int(cuts[-1])
        self._piece(ops.iloc[:i + 1], i)
        self.carry = ops.iloc[i:].reset_index(drop=True)

    def _piece(self, ops, n: int) -> None:
        """The first ``n`` rows of ``ops``; a row after them is the op that ends the last gap."""
        piece = ops.iloc[:n]
        st, en = piece["start"].to_numpy(), piece["end"].to_numpy()
        hi = int(ops["start"].iloc[n]) if len(ops) > n else int(en.max())
        self.hi = max(self.hi, int(en.max()))
        sets = _sets(piece)
        gs, ge = iv.gaps(sets["B"], int(st[0]), hi)
        cls = _classify_gaps(ops, gs, ge, self.blocking)
        g_in = iv.covered(self.in_step, gs, ge) if self.n else np.zeros(gs.size, dtype=np.int64)
        b = self.base
        gaps = pd.DataFrame({"gpu": b["gpu"], "start": gs, "end": ge,
                             **{k: _objects(v) for k, v in cls.items()}, "in_steps": g_in},
                            copy=False)
        gaps["step"] = _gap_step(gs, ge, self.w0, self.w1)
        gaps = gaps.assign(**{k: _objects(same(gs.size, b[k])) if isinstance(b[k], str) else b[k]
                              for k in ("process", "rank", "pid")})
        for k in _SETS:
            self.run[k] += iv.measure(sets[k])
        length = ge - gs
        cause = gaps["cause"].to_numpy(dtype=object)
        for c in CAUSES:
            m = cause == c
            self.cause[c] += int(length[m].sum())
            self.cause_out[c] += int((length - g_in)[m].sum())
        self.between += int((length - g_in).sum())
        mem = text_is(piece["kind"], "memory")
        self.counts += (int((~mem).sum()), int(mem.sum()))
        csets = _cause_sets(gaps)
        if self.n:
            for k in _SETS:
                self.step_cov[k] += iv.covered(sets[k], self.w0, self.w1)
            for c, cs in csets.items():
                self.step_idle[c] += iv.covered(cs, self.w0, self.w1)
            step_of = assign_times(times_of(piece), self.steps)
            self.step_counts[0] += np.bincount(step_of[(step_of >= 0) & ~mem], minlength=self.n)
            self.step_counts[1] += np.bincount(step_of[(step_of >= 0) & mem], minlength=self.n)
        self._parts(sets, csets, st, mem)
        self.sink(gaps)

    def _parts(self, sets, csets, starts, mem) -> None:
        for k in _SETS:
            self.part_cov[k] += iv.covered(sets[k], self.a0, self.a1)
        for i, (part, b0, b1) in enumerate(self.parts):
            for c, cs in csets.items():
                if part != "steps" or c == "SyncNs":
                    self.part_idle[c][i] += iv.covered(cs, [b0], [b1])[0]
                else:
                    self.part_idle[c][i] += iv.covered(iv.intersect(cs, self.in_step), [b0], [b1])[0]
                    self.part_between[i] += iv.covered(iv.intersect(cs, self.outside), [b0], [b1])[0]
            sel = (starts >= b0) & (starts < b1)
            self.part_counts[:, i] += (int((sel & ~mem).sum()), int((sel & mem).sum()))
            if part == "steps":
                eq = starts == b1
                self.at_end += (int((eq & ~mem).sum()), int((eq & mem).sum()))

    def rows(self) -> tuple[dict, list[dict], list[dict]]:
        """The run row, the step rows and the part rows, as analyze_process makes them."""
        if self.carry is not None and len(self.carry):
            self._piece(self.carry, len(self.carry))
            self.carry = None
        b, lo, hi = self.base, self.lo, self.hi
        row = {**b, "start": lo, "end": hi, **{k: int(v) for k, v in measures(
            self.run, hi - lo).items()}}
        for c in CAUSES:
            row[c] = int(self.cause[c] - self.cause_out[c]) if self.n else int(self.cause[c])
        row["BetweenStepsNs"] = int(self.between) if self.n else 0
        row["Kernels"], row["Copies"] = int(self.counts[0]), int(self.counts[1])
        steps = []
        if self.n:
            sm = measures(self.step_cov, self.w1 - self.w0)
            for i in range(self.n):
                st = self.steps.iloc[i]
                r = {**b, "step": int(st["step"]), "step_name": st["name"],
                     "host_start": int(st["start"]), "host_end": int(st["end"]),
                     "HostNs": int(st["end"] - st["start"]), "start": int(self.w0[i]),
                     "end": int(self.w1[i]), **{k: int(v[i]) for k, v in sm.items()}}
                r.update({c: int(v[i]) for c, v in self.step_idle.items()})
                r["Kernels"], r["Copies"] = int(self.step_counts[0, i]), int(self.step_counts[1, i])
                steps.append(r)
        return row, steps, self._part_rows(hi)

    def _part_rows(self, hi: int) -> list[dict]:
        keep = [i for i, (part, b0, b1) in enumerate(self.parts)
                if part in ("steps", "run") or min(b1, hi) > b0]
        rows = []
        for i in keep:
            part, b0, b1 = self.parts[i]
            b1 = hi if b1 == FAR else b1
            cov = {k: v[i] for k, v in self.part_cov.items()}
            r = {**self.base, "part": part, "start": b0, "end": b1,
                 **{k: int(v) for k, v in measures(cov, b1 - b0).items()}}
            for c in CAUSES:
                r[c] = int(self.part_idle[c][i])
            r["BetweenStepsNs"] = int(self.part_between[i])
            k, c = self.part_counts[:, i]
            if part == "steps" and i == keep[-1]:  # the last part counts ops at its end too
                k, c = k + self.at_end[0], c + self.at_end[1]
            r["Kernels"], r["Copies"] = int(k), int(c)
            rows.append(r)
        return rows
