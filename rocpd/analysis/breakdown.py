"""Where each GPU's time goes, per process and GPU, over the whole run and per step.

Temporal breakdown (HTA's, made exclusive so the parts add up to the span): over a window, time
with any compute kernel running is *compute*; with a collective but no compute kernel,
*communication*; with only copies/sets, *memory*; with nothing, *idle*. Overlap of communication
with compute is reported beside it.

Windows: the run's window on a GPU starts at its first activity and ends at its last (start-up
before the first kernel is not idle time). A step's window spans the GPU work launched inside the
step (launch calls matched by correlation id), from its first start to its last end, cut where the
next step's work begins; GPU time between two steps' windows is *between steps*.

Idle breakdown: each gap between GPU activity is charged, by what the host did, to
- *sync*: a call that blocked the host until the GPU drained (a ``*Synchronize``, a copy to host)
  returned at the gap's start, and the host went straight on to the next launch (within
  ``RELAUNCH_NS``): the wait emptied the queue and the relaunch is the idle time;
- *host late*: the next op's launch call ended after the GPU had gone idle (launch gaps: the host
  could not keep the queue filled). A gap after a wait whose host then did work of its own before
  the next launch (loading data, logging) is charged here, to that work, not to the wait: the
  gap's ``after_call`` keeps the wait as evidence;
- *other*: the next op was already submitted (it waited on another stream, an event, a latency);
- *unknown*: no API calls recorded to tell (e.g. kernel tracing only).
Each gap also says when the host was free to launch (``host_from``: the gap's start, or the
wait's return) and when it did (``host_to``: the next launch call's start, else the gap's end),
on which thread (``launch_tid``) and from which line (``next_site``): the window in which the
host work that delayed the launch ran (rocpd.analysis.hostwork names it).

Parts: with steps, each GPU's run is cut into *startup* (first activity to the first step's
window), *steps* (first step window to the last, between-steps idle included) and *teardown*
(after the last step); the findings read the steps part, start-up is reported apart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import intervals as iv
from .activity import blocking_calls
from .gpuload import same, text_is
from .steps import assign

# A synchronising call returns a few µs after the GPU drained (and host and GPU timestamps of one
# moment may differ by about a µs): such a call still counts as having waited for the drain.
TOLERANCE_NS = 2_000
# A host that spends longer than this between a wait's return and its next launch call is doing
# work of its own (a step's Python between two ops takes tens of µs; a data loader, ms).
RELAUNCH_NS = 100_000
CAUSES = ("HostLateNs", "SyncNs", "OtherNs", "UnknownNs")


def _sets(ops):
    kind = ops["kind"].to_numpy()
    s, e = ops["start"].to_numpy(), ops["end"].to_numpy()
    comp = iv.union(s[kind == "compute"], e[kind == "compute"])
    comm = iv.union(s[kind == "comm"], e[kind == "comm"])
    return {"C": comp, "M": comm, "CM": iv.merge(comp, comm), "B": iv.union(s, e)}


def _measures(sets, w0, w1) -> dict:
    c = iv.covered(sets["C"], w0, w1)
    m = iv.covered(sets["M"], w0, w1)
    cm = iv.covered(sets["CM"], w0, w1)
    b = iv.covered(sets["B"], w0, w1)
    span = np.asarray(w1) - np.asarray(w0)
    return {"SpanNs": span, "ComputeNs": c, "CommunicationNs": cm - c, "MemoryNs": b - cm,
            "IdleNs": span - b, "BusyNs": b, "CommTotalNs": m, "OverlapNs": m + c - cm}


def _classify_gaps(ops, gs, ge, blocking):
    """Cause of each gap [gs, ge) on one GPU, as a dict of columns: cause, call (the blocking
    call charged for it, index into ``blocking``, -1 for none), after_call (the wait that
    preceded host work charged as host late, -1 for none), host_from, host_to, launch_tid,
    next_site."""
    n = gs.size
    cause = same(n, "UnknownNs")
    call = np.full(n, -1, dtype=np.int64)
    after = np.full(n, -1, dtype=np.int64)
    out = {"cause": cause, "call": call, "after_call": after, "host_from": gs.copy(),
           "host_to": ge.copy(), "launch_tid": np.zeros(n, dtype=np.int64),
           "next_site": np.full(n, None, dtype=object)}
    if n == 0:
        return out
    starts = ops["start"].to_numpy()
    nxt = np.minimum(np.searchsorted(starts, ge, side="left"), len(ops) - 1)
    l_start = ops["launch_start"].to_numpy(dtype=float)[nxt]
    l_end = ops["launch_end"].to_numpy(dtype=float)[nxt]
    l_tid = ops["launch_tid"].to_numpy()[nxt]
    out["launch_tid"] = l_tid.astype(np.int64)
    out["next_site"] = ops["site"].to_numpy(dtype=object)[nxt]
    known = ~np.isnan(l_end)
    out["host_to"] = np.where(known, np.minimum(l_start, ge), ge).astype(np.int64)
    cause[known] = "OtherNs"
    cause[known & (l_end > gs)] = "HostLateNs"
    if len(blocking) == 0:
        return out
    b_tid = blocking["tid"].to_numpy()
    groups = [(np.flatnonzero(known & (l_tid == t)), np.flatnonzero(b_tid == t))
              for t in np.unique(l_tid[known])]
    groups.append((np.flatnonzero(~known), np.arange(len(blocking))))  # any thread
    b_start, b_end = blocking["start"].to_numpy(), blocking["end"].to_numpy()
    for gi, bi in groups:
        if gi.size == 0 or bi.size == 0:
            continue
        order = bi[np.argsort(b_end[bi], kind="stable")]
        ends, bst = b_end[order], b_start[order]
        # The last blocking call to return before the next op started: did it return inside
        # the gap, and was the next op launched only after it returned? It need not have
        # begun before the GPU went idle: kernels of a few µs are done before the host even
        # enters the synchronisation after them (seen on an H100), and the gap is then the
        # host synchronising instead of launching.
        j = np.searchsorted(ends, ge[gi] + TOLERANCE_NS, side="right") - 1
        jj = np.maximum(j, 0)
        hit = (j >= 0) & (ends[jj] >= gs[gi] - TOLERANCE_NS) & (bst[jj] <= ge[gi] + TOLERANCE_NS)
        ls = l_start[gi]
        hit &= np.isnan(ls) | (ls >= ends[jj] - TOLERANCE_NS)
        ret = ends[jj]
        resumed = np.where(np.isnan(ls), ge[gi], ls)
        prompt = hit & (resumed - ret <= RELAUNCH_NS)
        cause[gi[prompt]] = "SyncNs"
        call[gi[prompt]] = order[jj[prompt]]
        late = hit & ~prompt
        # Host work after the wait: the work, not the wait, kept the GPU idle.
        cause[gi[late & known[gi]]] = "HostLateNs"
        after[gi[late]] = order[jj[late]]
        out["host_from"][gi[hit]] = np.clip(ret[hit], gs[gi[hit]], ge[gi[hit]])
    return out


def _step_windows(ops, step_of, n_steps):
    """(w0, w1) per step on one GPU (w0 == w1 == 0 where the step launched nothing here),
    each cut where the next step's work begins so that windows never overlap."""
    w0 = np.zeros(n_steps, dtype=np.int64)
    w1 = np.zeros(n_steps, dtype=np.int64)
    m = step_of >= 0
    if n_steps == 0 or not m.any():
        return w0, w1
    s, e, k = ops["start"].to_numpy()[m], ops["end"].to_numpy()[m], step_of[m]
    w0[:] = np.iinfo(np.int64).max
    np.minimum.at(w0, k, s)
    np.maximum.at(w1, k, e)
    w0[w1 == 0] = 0
    used = np.flatnonzero(w1 > w0)
    order = used[np.argsort(w0[used], kind="stable")]
    if order.size > 1:
        w1[order[:-1]] = np.maximum(w0[order[:-1]], np.minimum(w1[order[:-1]], w0[order[1:]]))
    return w0, w1


def analyze_process(p, steps):
    """(run rows, step rows, gaps) for process ``p`` with its ``steps`` frame (may be empty)."""
    gpu = p.gpu
    step_all = assign(p, steps)
    blocking = blocking_calls(p)
    run_rows, step_rows, gap_frames, part_rows = [], [], [], []
    base = {"process": p.label, "rank": p.rank, "pid": p.pid}
    for agent in sorted(gpu["agent"].unique()) if len(gpu) else []:
        m = (gpu["agent"] == agent).to_numpy()
        ops = gpu if m.all() else gpu[m].reset_index(drop=True)  # one GPU: no copy of its rows
        step_of = step_all[m]
        idx = p.agents.get(int(agent), (int(agent), ""))[0]
        sets = _sets(ops)
        lo, hi = int(ops["start"].min()), int(ops["end"].max())
        gs, ge = iv.gaps(sets["B"], lo, hi)
        cls = _classify_gaps(ops, gs, ge, blocking)
        n_steps = len(steps)
        w0, w1 = _step_windows(ops, step_of, n_steps)
        in_step = iv.union(w0, w1)
        # Each gap, split into the part inside step windows and the part between them.
        g_in = iv.covered(in_step, gs, ge) if n_steps else np.zeros(gs.size, dtype=np.int64)
        # Texts as objects (a gap per kernel on a launch-bound run: pandas' str dtype would copy
        # the cause and the process's label into every row).
        gaps = pd.DataFrame({"gpu": idx, "start": gs, "end": ge,
                             **{k: _objects(v) for k, v in cls.items()}, "in_steps": g_in},
                            copy=False)  # the arrays themselves, not stacked into a copy
        gaps["step"] = _gap_step(gs, ge, w0, w1)
        gap_frames.append(gaps.assign(**{k: _objects(same(gs.size, v))
                                         if isinstance(v, str) else v for k, v in base.items()}))
        meas = _measures(sets, [lo], [hi])
        row = {**base, "gpu": idx, "start": lo, "end": hi, **{k: int(v[0]) for k, v in meas.items()}}
        for c in CAUSES:
            row[c] = int((gaps["end"] - gaps["start"])[text_is(gaps["cause"], c)].sum())
        row["BetweenStepsNs"] = int((gaps["end"] - gaps["start"] - gaps["in_steps"]).sum()) if n_steps else 0
        for c in CAUSES:  # the between-steps part is not charged twice
            row[c] = int(row[c] - _between(gaps, c)) if n_steps else row[c]
        is_mem = text_is(ops["kind"], "memory")
        row["Kernels"], row["Copies"] = int((~is_mem).sum()), int(is_mem.sum())
        run_rows.append(row)
        part_rows += _parts(ops, sets, gaps, w0, w1, in_step, lo, hi, {**base, "gpu": idx})
        if n_steps:
            sm = _measures(sets, w0, w1)
            idle = {c: iv.covered(cs, w0, w1) for c, cs in _cause_sets(gaps).items()}
            kernels = np.bincount(step_of[(step_of >= 0) & ~is_mem], minlength=n_steps)
            copies = np.bincount(step_of[(step_of >= 0) & is_mem], minlength=n_steps)
            for i in range(n_steps):
                st = steps.iloc[i]
                r = {**base, "gpu": idx, "step": int(st["step"]), "step_name": st["name"],
                     "host_start": int(st["start"]), "host_end": int(st["end"]),
                     "HostNs": int(st["end"] - st["start"]), "start": int(w0[i]), "end": int(w1[i]),
                     **{k: int(v[i]) for k, v in sm.items()}}
                r.update({c: int(v[i]) for c, v in idle.items()})
                r["Kernels"], r["Copies"] = int(kernels[i]), int(copies[i])
                step_rows.append(r)
    gaps = (gap_frames[0] if len(gap_frames) == 1 else pd.concat(gap_frames, ignore_index=True)
            ) if gap_frames else pd.DataFrame(
        columns=["gpu", "start", "end", "cause", "call", "after_call", "host_from", "host_to",
                 "launch_tid", "next_site", "in_steps", "step", "process", "rank", "pid"])
    return run_rows, step_rows, gaps, blocking, part_rows


def _parts(ops, sets, gaps, w0, w1, in_step, lo, hi, base) -> list[dict]:
    """Rows of the run's parts on one GPU (see the module's text): measures, idle by cause and,
    in the steps part, the idle between step windows (idle charged to a wait counts as the
    wait's wherever it lies, so that it is not charged twice)."""
    used = w1 > w0
    if used.any():
        s0, s1 = int(w0[used].min()), int(w1[used].max())
        bounds = [b for b in (("startup", lo, s0), ("steps", s0, s1), ("teardown", s1, hi))
                  if b[0] == "steps" or b[2] > b[1]]
    else:
        bounds = [("run", lo, hi)]
    a0 = np.array([b[1] for b in bounds], dtype=np.int64)
    a1 = np.array([b[2] for b in bounds], dtype=np.int64)
    meas = _measures(sets, a0, a1)
    csets = _cause_sets(gaps)
    outside = iv.gaps(in_step, lo, hi)
    starts = ops["start"].to_numpy()
    is_mem = text_is(ops["kind"], "memory")
    rows = []
    for i, (part, b0, b1) in enumerate(bounds):
        r = {**base, "part": part, "start": b0, "end": b1, **{k: int(v[i]) for k, v in meas.items()}}
        between = 0
        for c, cs in csets.items():
            if part != "steps" or c == "SyncNs":
                r[c] = int(iv.covered(cs, [b0], [b1])[0])
            else:
                r[c] = int(iv.covered(iv.intersect(cs, in_step), [b0], [b1])[0])
                between += int(iv.covered(iv.intersect(cs, outside), [b0], [b1])[0])
        r["BetweenStepsNs"] = between
        sel = (starts >= b0) & ((starts < b1) | ((i == len(bounds) - 1) & (starts <= b1)))
        r["Kernels"], r["Copies"] = int((sel & ~is_mem).sum()), int((sel & is_mem).sum())
        rows.append(r)
    return rows


def _objects(v):
    return pd.Series(v, dtype=object) if isinstance(v, np.ndarray) and v.dtype == object else v


def _gap_step(gs, ge, w0, w1):
    """Index of the step window holding each gap (-1: between steps / no steps)."""
    out = np.full(gs.size, -1, dtype=np.int64)
    used = np.flatnonzero(w1 > w0)
    if used.size == 0 or gs.size == 0:
        return out
    order = used[np.argsort(w0[used], kind="stable")]
    i = np.searchsorted(w0[order], gs, side="right") - 1
    ok = i >= 0
    k = order[np.maximum(i, 0)]
    hit = ok & (ge <= w1[k])
    out[hit] = k[hit]
    return out


def _between(gaps, cause):
    g = gaps[text_is(gaps["cause"], cause)]
    return int((g["end"] - g["start"] - g["in_steps"]).sum())


def _cause_sets(gaps) -> dict:
    """Merged set of the gaps of each cause (gaps are disjoint: each set is already merged)."""
    cause = gaps["cause"].to_numpy(dtype=object)
    start, end = gaps["start"].to_numpy(dtype=np.int64), gaps["end"].to_numpy(dtype=np.int64)
    out = {}
    for c in CAUSES:
        m = np.asarray(cause == c, dtype=bool)
        out[c] = (start[m], end[m])
    return out
