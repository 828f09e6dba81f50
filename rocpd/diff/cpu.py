"""A process without GPU work (a data loader, a model on the CPU), cut into steps as a GPU run
is: its work per step is the time in each ROCTx range (self time: the range's own, its inner
ranges left out, so a slower inner phase is named, not every range around it) and the time of
each sampled Python line (samples times the sampling interval, all threads of the process).

The step range is the analysis' (given or detected); without one, the process's run is one step.
Ranges and samples belong to the step they start in; the step range itself is no phase.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.steps import key_of
from .names import NO_LINE
from .side import ProcSteps, whole_run

OPS_COLUMNS = ["step", "line", "kind2", "key", "start", "end", "duration", "gpu", "stream",
               "name", "kind"]


def has_work(p) -> bool:
    return bool(len(p.ranges)) or (p.samples is not None and bool(len(p.samples)))


def interval_ns(samples, hz) -> float:
    """The time one sample stands for: the sampling period, from the run's rate where it was
    stored, else the median time between one thread's samples."""
    if hz:
        return 1e9 / hz
    gaps = []
    for _, g in samples.groupby("tid"):
        t = np.sort(g["timestamp"].to_numpy(np.int64))
        gaps.extend(np.diff(t).tolist())
    return float(np.median(gaps)) if gaps else 0.0


def self_times(ranges) -> np.ndarray:
    """Each range's duration without its direct inner ranges' (``ranges`` as the analysis sorts
    them: by thread, start, longest first)."""
    dur = (ranges["end"] - ranges["start"]).to_numpy(np.int64)
    own = dur.copy()
    stack: list[tuple[int, int]] = []  # (end, index)
    last = None
    for i, (tid, s) in enumerate(zip(ranges["tid"].to_numpy(), ranges["start"].to_numpy(),
                                     strict=True)):
        if tid != last:
            stack, last = [], tid
        while stack and stack[-1][0] <= s:
            stack.pop()
        if stack:
            own[stack[-1][1]] -= dur[i]
        stack.append((int(ranges["end"].iat[i]), i))
    return np.maximum(own, 0)


def _step_of(steps, t: np.ndarray) -> np.ndarray:
    s, e = steps["start"].to_numpy(np.int64), steps["end"].to_numpy(np.int64)
    i = np.searchsorted(s, t, side="right") - 1
    ok = i >= 0
    ok[ok] = t[ok] < e[i[ok]]
    return np.where(ok, i, -1)


def proc(p, st, step_name, skip, hz) -> ProcSteps:
    """The steps of CPU-only process ``p`` (``st``: its steps from the analysis)."""
    steps, whole = whole_run(p, st, skip, _span(p))
    total = len(st) if st is not None and len(st) else 1
    steps["HostNs"] = steps["end"] - steps["start"]
    work = []
    r = p.ranges
    phases = pd.DataFrame({"step": [], "phase": [], "ns": []})
    if len(r):
        own = self_times(r)
        names = r["name"].astype(str).to_numpy(object)
        is_step = np.array([bool(step_name) and (x == step_name or key_of(x) == step_name)
                            for x in names], dtype=bool)
        k = _step_of(steps, r["start"].to_numpy(np.int64))
        m = (k >= 0) & ~is_step
        rows = pd.DataFrame({"step": k[m], "line": "", "kind": "range", "key": names[m],
                             "memory": "", "ns": own[m], "count": 1, "name": names[m]})
        work.append(rows)
        phases = rows.groupby(["step", "key"]).agg(ns=("ns", "sum")).reset_index().rename(
            columns={"key": "phase"})
    s = p.samples
    if s is not None and len(s):
        k = _step_of(steps, s["timestamp"].to_numpy(np.int64))
        m = k >= 0
        each = interval_ns(s, hz)
        # Texts (the frame holds them as categories, missing where a sample has no frame).
        site, fn = s["site"][m].astype(object), s["function"][m].astype(object)
        sub = pd.DataFrame({"step": k[m], "line": site.where(site.notna(), NO_LINE).to_numpy(),
                            "function": fn.where(fn.notna(), "(unknown)").to_numpy()})
        g = sub.groupby(["step", "line", "function"]).size().reset_index(name="count")
        work.append(pd.DataFrame({"step": g["step"], "line": g["line"].astype(object),
                                  "kind": "sampled", "key": g["function"], "memory": "",
                                  "ns": g["count"] * each, "count": g["count"],
                                  "name": g["function"]}))
    work = [w for w in work if len(w)]
    work = (pd.concat(work, ignore_index=True) if work else
            pd.DataFrame(columns=["step", "line", "kind", "key", "memory", "ns", "count", "name"]))
    measures = pd.DataFrame({"step": steps["step"], "HostNs": steps["HostNs"]})
    for c in ("GpuNs", "ComputeNs", "IdleNs", "Kernels", "Copies"):
        measures[c] = 0
    return ProcSteps(p, steps, pd.DataFrame(columns=OPS_COLUMNS), None, work, phases, measures,
                     whole, total, gpu_work=False)


def _span(p) -> tuple[int, int]:
    lo, hi = [], []
    if len(p.ranges):
        lo.append(int(p.ranges["start"].min()))
        hi.append(int(p.ranges["end"].max()))
    if p.samples is not None and len(p.samples):
        lo.append(int(p.samples["timestamp"].min()))
        hi.append(int(p.samples["timestamp"].max()))
    return min(lo), max(hi)
