"""One run of a diff, cut into steps: per process, per step, the time of every piece of work
(GPU ops by launch line, kind and kernel; host waits by line; GPU idle by the line whose launch
ended it), the step's measures and its phases, all as long tables that the matching and the
statistics read.

Steps are the analysis' (:mod:`rocpd.analysis.steps`: the given or detected ROCTx step range);
a process without steps counts as one step, its whole run. GPU work belongs to the step it was
launched in. GPU idle belongs to the step of the op that ended it, from the step's start on
(start-up before the first step is not charged to it); idle after a wait that the analysis
charges to the wait (the host relaunched at once) is the wait's, other idle is the line whose
launch came late (or whose op waited on another).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..analysis.steps import assign, launch_times
from .names import NO_LINE, api_key, kernel_key
from .phases import of_ops

IDLE_NAMES = {"HostLateNs": "idle: host launched late", "OtherNs": "idle: waiting on a dependency",
              "UnknownNs": "idle: cause not recorded", "SyncNs": "idle: after a wait"}
KINDS = {"compute": "kernel", "comm": "collective", "memory": "copy"}


@dataclass
class ProcSteps:
    """A process of one run: its steps (kept ones, renumbered from 0) and what they did."""

    process: object            # rocpd.analysis.Process
    steps: object              # DataFrame: step, start, end, tid, name, HostNs
    ops: object                # DataFrame: one row per GPU op launched in a kept step (a swept
                               # process: rocpd.diff.streamed.Ops, read again by ops_of)
    waits: object              # DataFrame: one row per host wait in a kept step
    work: object               # long DataFrame: step, site, kind, key, name, ns, count, memory
    phases: object             # long DataFrame: step, phase, ns
    measures: object           # per step: HostNs, GpuNs, ComputeNs, IdleNs, Kernels, Copies
    whole_run: bool = False    # no steps: the run is one step
    total_steps: int = 0       # before --skip-steps
    gpu_work: bool = True      # False: a process without GPU work (rocpd.diff.cpu)
    run: int = 0               # which run of its side (rocpd.diff.runs)

    def shift(self, offset: int) -> None:
        """Number its steps from ``offset`` (the runs of a side one after the other)."""
        if hasattr(self.ops, "of_step"):  # a swept process's ops, read again when asked for
            self.ops.offset += offset
        for frame in (self.steps, self.ops, self.waits, self.work, self.phases, self.measures):
            if not isinstance(frame, pd.DataFrame):
                continue
            if "step" in frame.columns and len(frame):
                frame["step"] = frame["step"].to_numpy(dtype=np.int64) + offset

    def ops_of(self, step: int):
        """The GPU ops of step ``step``."""
        if hasattr(self.ops, "of_step"):
            return self.ops.of_step(step)
        return self.ops[self.ops["step"] == step]


@dataclass
class Side:
    label: str
    paths: list
    step_name: str | None
    step_source: str
    procs: list = field(default_factory=list)
    runs: int = 0              # rocpd.diff.runs: runs found among its databases
    gpu: bool = True           # its processes did GPU work (else: rocpd.diff.cpu)
    dropped: int = 0
    notes: list = field(default_factory=list)
    meters: list = field(default_factory=list)  # rocpd.energy.meter: each GPU's energy, if any
    memory: object = None  # rocpd.memory.MemoryAnalysis, when GPU memory was recorded
    every_step_ns: object = None  # a bounded run's every step time (rocpd.diff.every_step)
    swept: bool = False  # a process swept (rocpd.diff.streamed): its ops are read again
    db: object = None  # then its open connection


def gpu_span(p) -> tuple[int, int]:
    g = p.gpu
    lo = int(g["launch_start"].fillna(g["start"]).min())
    hi = int(max(g["end"].max(), g["launch_end"].fillna(g["end"]).max()))
    return lo, hi


def whole_run(p, st, skip: int, span):
    """(steps, whole): the kept steps of ``st`` renumbered from 0, or (no steps) the run from
    ``span`` (first, last time) as one step."""
    if st is None or st.empty:
        lo, hi = span
        return pd.DataFrame({"step": [0], "start": [lo], "end": [hi + 1], "tid": [p.pid],
                             "name": ["(whole run)"], "orig": [0]}), True
    st = st.sort_values("start", kind="stable").iloc[skip:].reset_index(drop=True)
    out = pd.DataFrame({"step": np.arange(len(st)), "start": st["start"].to_numpy(np.int64),
                        "end": st["end"].to_numpy(np.int64), "tid": st["tid"].to_numpy(),
                        "name": st["name"].to_numpy(object), "orig": st["step"].to_numpy()})
    return out, False


def proc(p, st, gaps, blocking, step_name, skip) -> ProcSteps:
    steps, whole = whole_run(p, st, skip, gpu_span(p))
    total = len(st) if st is not None and len(st) else 1
    steps["HostNs"] = steps["end"] - steps["start"]
    step_of = assign(p, steps)
    ops = prepare_ops(p, p.gpu, step_of, launch_times(p), step_name)
    waits = _waits(blocking, steps)
    idle = idle_tables(_idle(gaps, steps, blocking, _held_next_step(p, step_of)))
    return finish(p, steps, whole, total, ops, ops_tables(ops), waits, idle)


def prepare_ops(p, g, step_of, times, step_name):
    """The GPU ops of frame ``g`` (a process's, or a chunk of it in order) launched in a kept
    step, with their step, phase, kind, key, line, memory kinds and GPU."""
    keep = step_of >= 0
    ops = g[keep].reset_index(drop=True)
    ops["step"] = step_of[keep]
    ops["phase"] = of_ops(p, ops, times[keep], step_name)
    # Per distinct value, each row pointing at the shared result (a million kernels have a few
    # hundred names): no Python call per row, no copy of a string per row.
    ops["kind2"] = _shared(KINDS.get, ops["kind"])
    ops["key"] = _shared(lambda n, k: kernel_key(n) if k != "copy" else str(n), ops["name"],
                         ops["kind2"])
    ops["line"] = ops["site"].where(ops["site"].notna(), NO_LINE).astype(object)
    ops["memory"] = _shared(_memory, ops["src_memory"], ops["dst_memory"], ops["kind2"])
    gpu_of = {int(k): v[0] for k, v in p.agents.items()}
    ops["gpu"] = ops["agent"].map({a: gpu_of.get(int(a), int(a)) for a in ops["agent"].unique()})
    return ops


def ops_tables(ops) -> dict:
    """What the diff keeps of prepared ops: the work per item, the phases, and per step the busy
    and compute time and the kernel and copy counts. Sums, counts and first names: those of two
    halves of the ops (in order) combine into the whole's (rocpd.diff.streamed)."""
    # Memory kinds are part of the key here; the tables keep the most frequent per item.
    return {
        "work": ops.groupby(["step", "line", "kind2", "key", "memory"], sort=False).agg(
            ns=("duration", "sum"), count=("duration", "size"), name=("name", "first"))
        .reset_index().rename(columns={"kind2": "kind"}),
        "phases": ops.groupby(["step", "phase"]).agg(ns=("duration", "sum")).reset_index(),
        "busy": ops.groupby("step")["duration"].sum(),
        "compute": ops[ops["kind2"] == "kernel"].groupby("step")["duration"].sum(),
        "kernels": ops[ops["kind2"] != "copy"].groupby("step").size(),
        "copies": ops[ops["kind2"] == "copy"].groupby("step").size(),
    }


def idle_tables(idle) -> tuple | None:
    """(work rows per item, idle ns per step) of the GPU idle rows :func:`_idle` gives; None
    without any."""
    if not len(idle):
        return None
    return (idle.groupby(["step", "line", "kind", "key"], sort=False).agg(
        ns=("ns", "sum"), count=("ns", "size"), name=("name", "first")).reset_index(),
        idle.groupby("step")["ns"].sum())


def finish(p, steps, whole, total, ops, t: dict, waits, idle) -> ProcSteps:
    """The ProcSteps of process ``p`` from its ops' tables ``t`` (:func:`ops_tables`), its waits
    and its idle tables (:func:`idle_tables`)."""
    work = [t["work"]]
    if len(waits):
        work.append(waits.groupby(["step", "line", "key"], sort=False).agg(
            count=("start", "size"), name=("name", "first")).reset_index().assign(
            kind="sync", ns=0, memory=""))
    if idle is not None:
        work.append(idle[0].assign(memory=""))
        # GPU idle charged to a wait counts the wait's time, not another call
        work[-1].loc[work[-1]["kind"] == "sync", "count"] = 0
    work = [w for w in work if len(w)]
    work = pd.concat(work, ignore_index=True) if work else pd.DataFrame(
        {"step": [], "line": [], "kind": [], "key": [], "memory": [], "ns": [], "count": [],
         "name": []})
    work = work.groupby(["step", "line", "kind", "key", "memory"], sort=False).agg(
        ns=("ns", "sum"), count=("count", "sum"), name=("name", "first")).reset_index()
    phases = t["phases"]
    idle_ns = idle[1] if idle is not None else pd.Series(dtype="int64")
    if idle is not None:
        phases = pd.concat([phases, pd.DataFrame({"step": idle_ns.index, "phase": "idle",
                                                  "ns": idle_ns.to_numpy()})], ignore_index=True)
    measures = pd.DataFrame({"step": steps["step"], "HostNs": steps["HostNs"]}).set_index("step")
    measures["GpuNs"] = t["busy"].reindex(measures.index, fill_value=0)
    measures["ComputeNs"] = t["compute"].reindex(measures.index, fill_value=0)
    measures["IdleNs"] = idle_ns.reindex(measures.index, fill_value=0)
    measures["Kernels"] = t["kernels"].reindex(measures.index, fill_value=0)
    measures["Copies"] = t["copies"].reindex(measures.index, fill_value=0)
    return ProcSteps(p, steps, ops, waits, work, phases, measures.reset_index(), whole, total)


def _shared(func, *columns) -> pd.Series:
    """``func`` of each row's values of ``columns``, called once per distinct combination, as
    an object column whose cells share the results."""
    combo = np.zeros(len(columns[0]), dtype=np.int64)
    uniqs = []
    for c in columns:
        codes, u = pd.factorize(c.to_numpy(dtype=object), use_na_sentinel=False)
        combo = combo * max(len(u), 1) + codes
        uniqs.append(u)
    codes, distinct = pd.factorize(combo)
    table = np.empty(len(distinct), dtype=object)
    values = []
    for x in distinct.tolist():
        parts = []
        for u in reversed(uniqs):
            x, r = divmod(x, len(u))
            parts.append(u[r])
        values.append(func(*reversed(parts)))
    table[:] = values
    return pd.Series(table[codes], index=columns[0].index, dtype=object)


def _memory(src, dst, kind) -> str:
    """A copy's memory kinds, 'PAGEABLE→DEVICE' ('' for a kernel or none recorded)."""
    if kind != "copy":
        return ""
    text = f"{'' if pd.isna(src) else src}→{'' if pd.isna(dst) else dst}"
    return "" if text == "→" else text


def _step_at(steps, t):
    """Index of the step whose host range holds each time of ``t`` (-1: none)."""
    s, e = steps["start"].to_numpy(np.int64), steps["end"].to_numpy(np.int64)
    i = np.searchsorted(s, t, side="right") - 1
    ok = i >= 0
    ok[ok] = t[ok] < e[i[ok]]
    return np.where(ok, i, -1)


def _wait_line(b):
    site = b["site"].where(b["site"].notna(), b["after_site"])
    return site.where(site.notna(), NO_LINE).astype(object)


def _waits(blocking, steps):
    if blocking is None or blocking.empty:
        return pd.DataFrame(columns=["start", "end", "tid", "name", "blocking", "step", "line", "key"])
    k = _step_at(steps, blocking["start"].to_numpy(np.int64))
    w = blocking[k >= 0].assign(step=k[k >= 0])
    return w.assign(line=_wait_line(w), key=w["name"].map(api_key))


def _held_next_step(p, step_of):
    """For :func:`_idle`: (gpu, gap ends) -> the step of the op that ends each gap, the first op
    on that GPU starting at or after it (-1: none, or an op outside every step)."""
    g = p.gpu
    gpu_of = {int(k): v[0] for k, v in p.agents.items()}
    op_gpu = g["agent"].map(lambda x: gpu_of.get(int(x), int(x))).to_numpy()

    def next_step(gpu, ge):
        m = op_gpu == gpu
        starts = g["start"].to_numpy()[m]
        st_of = step_of[m]
        nxt = np.searchsorted(starts, ge, side="left")
        ok = nxt < starts.size
        k = np.full(ge.size, -1)
        k[ok] = st_of[nxt[ok]]
        return k
    return next_step


def _idle(gaps, steps, blocking, next_step):
    """GPU idle charged to steps: step, line, kind ("sync" when the analysis charges it to a
    wait, else "idle"), key, name, ns. ``next_step``: as :func:`_held_next_step` gives it."""
    cols = ["step", "line", "kind", "key", "name", "ns", "start", "end", "gpu"]
    if gaps is None or gaps.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for gpu, gg in gaps.groupby("gpu", sort=False):
        ge = gg["end"].to_numpy(np.int64)
        k = next_step(gpu, ge)
        sel = k >= 0
        if not sel.any():
            continue
        sub = gg[sel]
        kk = k[sel]
        lo = np.maximum(sub["start"].to_numpy(np.int64), steps["start"].to_numpy(np.int64)[kk])
        ns = sub["end"].to_numpy(np.int64) - lo
        rows.append(pd.DataFrame({"step": kk, "ns": ns, "cause": sub["cause"].to_numpy(),
                                  "call": sub["call"].to_numpy(), "next": sub["next_site"].to_numpy(),
                                  "start": lo, "end": sub["end"].to_numpy(np.int64), "gpu": gpu}))
    if not rows:
        return pd.DataFrame(columns=cols)
    d = pd.concat(rows, ignore_index=True)
    d = d[d["ns"] > 0].reset_index(drop=True)
    charged = (d["cause"] == "SyncNs").to_numpy() & (d["call"].to_numpy() >= 0)
    line = np.array(d["next"].where(d["next"].notna(), NO_LINE).astype(object), dtype=object)
    key = np.array(d["cause"].map(IDLE_NAMES).fillna("idle"), dtype=object)
    name = key.copy()
    kind = np.where(charged, "sync", "idle").astype(object)
    if charged.any():
        calls = blocking.iloc[d["call"].to_numpy()[charged]]
        line[charged] = _wait_line(calls).to_numpy()
        name[charged] = calls["name"].to_numpy()
        key[charged] = calls["name"].map(api_key).to_numpy()
    d = d.assign(line=line, kind=kind, key=key, name=name)
    return d[cols]
