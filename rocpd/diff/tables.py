"""The tables of a diff, from the long per-step tables of the two runs (rocpd.diff.side).

Matching: a piece of work is the same in both runs when its line (rocpd.diff.names.line_labels),
kind and kernel key (rocpd.diff.names.kernel_key) are. Kernels left over at a line in both runs
(another vendor's library, or the same library choosing another kernel for a changed shape) are
paired there, largest with largest: at that line, the work changed its kernel, and its time is
compared as one piece.

Values per step are means over the processes that ran that step (one process: its own values),
steps aligned by their index from the first kept step. Each row's figure is the mean over the
steps of its GPU work plus the trimmed mean of its GPU idle (rocpd.diff.bootstrap), so the items
of a line add up to the line, and the idle rows to the idle phase and the step's idle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .bootstrap import order, verdicts
from .names import NO_LINE, line_labels
from .phases import PHASES

ITEM_KEYS = ["line", "kind", "key"]
GPU_KINDS = ("kernel", "collective", "copy")
PAIRED_KINDS = ("kernel", "collective")


def _n_steps(procs) -> tuple[int, np.ndarray]:
    """Step columns (the runs' steps one after the other) and how many processes ran each."""
    n = max((int(ps.steps["step"].max()) + 1 for ps in procs if len(ps.steps)), default=0)
    have = np.zeros(n, dtype=float)
    for ps in procs:
        have[ps.steps["step"].to_numpy(dtype=int)] += 1
    return n, np.maximum(have, 1)


def _long(procs, name, labels):
    frames = [getattr(ps, name) for ps in procs if len(getattr(ps, name))]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    if "line" in out.columns:
        out["line"] = out["line"].map(lambda s: labels.get(s, s)).astype(object)
    return out


def _pair(wa, wb):
    """Rename kernel keys of ``wb`` paired by line with keys of ``wa`` (see the module's text)."""
    if wa.empty or wb.empty:
        return wb
    ta = wa.groupby(ITEM_KEYS)["ns"].sum()
    tb = wb.groupby(ITEM_KEYS)["ns"].sum()
    rename = {}
    in_a = set(ta.index.droplevel(2))
    for (line, kind), _ in tb.groupby(level=[0, 1]):
        if kind not in PAIRED_KINDS or line == NO_LINE or (line, kind) not in in_a:
            continue
        ka = ta.loc[(line, kind)]
        kb = tb.loc[(line, kind)]
        only_a = ka[~ka.index.isin(kb.index)].sort_values(ascending=False)
        only_b = kb[~kb.index.isin(ka.index)].sort_values(ascending=False)
        for x, y in zip(only_a.index, only_b.index, strict=False):
            rename[(line, kind, y)] = x
    if not rename:
        return wb
    keys = list(zip(wb["line"], wb["kind"], wb["key"], strict=True))
    wb = wb.copy()
    wb["key"] = [rename.get(k, k[2]) for k in keys]
    return wb


def _matrix(long, keys, n, have):
    """Per-step means (rows: ``keys``; columns: steps 0..n-1) of ns and count."""
    if long is None or long.empty or n == 0:
        idx = pd.MultiIndex.from_tuples([], names=keys) if len(keys) > 1 else pd.Index([], name=keys[0])
        return pd.DataFrame(index=idx, columns=range(n), dtype=float), \
            pd.DataFrame(index=idx, columns=range(n), dtype=float)
    g = long.groupby(keys + ["step"])[["ns", "count"]].sum()
    ns = g["ns"].unstack("step", fill_value=0).reindex(columns=range(n), fill_value=0) / have
    cnt = g["count"].unstack("step", fill_value=0).reindex(columns=range(n), fill_value=0) / have
    return ns.astype(float), cnt.astype(float)


class Builder:
    """The tables of one comparison: baseline processes ``pa``, new processes ``pb``. Runs
    without GPU work (``cpu``): their ROCTx ranges and sampled lines are the work, and all of it
    is the host's (judged against the between-run noise, rocpd.diff.runs)."""

    def __init__(self, pa, pb, resampler_for):
        self.cpu = not any(getattr(ps, "gpu_work", True) for ps in (*pa, *pb))
        la, lb = line_labels(_sites(pa), _sites(pb))
        self.na, self.have_a = _n_steps(pa)
        self.nb, self.have_b = _n_steps(pb)
        self.host_a = _measure(pa, "HostNs", self.na, self.have_a)
        self.host_b = _measure(pb, "HostNs", self.nb, self.have_b)
        self.idle_a = _measure(pa, "IdleNs", self.na, self.have_a)
        self.idle_b = _measure(pb, "IdleNs", self.nb, self.have_b)
        self.r = resampler_for(self.na, self.nb, self.idle_a, self.idle_b,
                               _runs(pa, self.na), _runs(pb, self.nb))
        self.wa = _long(pa, "work", la)
        self.wb = _pair(self.wa, _long(pb, "work", lb))
        self.pa, self.pb = pa, pb
        self.step_ns = float(self.r.estimate(self.host_a - self.idle_a, self.idle_a, 0)[0]) \
            if self.na else 0.0

    def _sides(self, keys, long, n, have, is_idle):
        """Per-step matrices of run ``long``: its GPU work, its GPU idle (rows where ``is_idle``)
        and its counts."""
        if long is None or long.empty:
            work, count = _matrix(long, keys, n, have)
            return work, None, count
        m = is_idle(long).to_numpy(dtype=bool)
        work, cw = _matrix(long[~m], keys, n, have)
        idle, ci = _matrix(long[m], keys, n, have)
        return work, idle, cw.add(ci, fill_value=0.0)

    def _compare(self, keys, la, lb, idle=None, is_idle=None):
        """``idle``: the change of each row's host-paced GPU idle (rocpd.diff.bootstrap), a
        Series by row key, or a function of (row keys, present in A, present in B, change).
        ``is_idle``: which rows of the long tables are GPU idle (their per-step figure is the
        trimmed mean); default: the idle kinds."""
        is_idle = is_idle or (lambda w: w["kind"].isin(IDLE_KINDS))
        wa, ia, ca = self._sides(keys, la, self.na, self.have_a, is_idle)
        wb, ib, cb = self._sides(keys, lb, self.nb, self.have_b, is_idle)
        idx = wa.index.union(wb.index).union(ca.index).union(cb.index)
        for m in (ia, ib):
            idx = idx if m is None else idx.union(m.index)
        wa, wb, ca, cb = (x.reindex(idx, fill_value=0.0) for x in (wa, wb, ca, cb))
        ia, ib = (None if x is None else x.reindex(idx, fill_value=0.0).to_numpy()
                  for x in (ia, ib))
        ma, mb = wa.to_numpy(), wb.to_numpy()
        pa = (ma.sum(axis=1) > 0) | (ca.to_numpy().sum(axis=1) > 0)
        pb = (mb.sum(axis=1) > 0) | (cb.to_numpy().sum(axis=1) > 0)
        if ia is not None:
            pa |= ia.sum(axis=1) > 0
        if ib is not None:
            pb |= ib.sum(axis=1) > 0
        if self.cpu:
            idle = lambda _i, _a, _b, delta: delta  # noqa: E731 - all of it the host's
        if callable(idle):
            idle = idle(idx, pa, pb, self.r.estimate(mb, ib, 1) - self.r.estimate(ma, ia, 0))
        elif idle is not None:
            idle = idle.reindex(idx, fill_value=0.0).to_numpy(dtype=float)
        cols = self.r.compare(ma, mb, self.step_ns, idle, ia, ib)
        df = pd.DataFrame(cols, index=idx).reset_index()
        df["BaseCount"] = ca.mean(axis=1).to_numpy() if self.na else 0.0
        df["NewCount"] = cb.mean(axis=1).to_numpy() if self.nb else 0.0
        df["status"] = np.where(pa & pb, "both", np.where(pa, "vanished", "new"))
        df["verdict"] = verdicts(df, pa, pb, self.r.measured)
        return df

    def items(self):
        df = self._compare(ITEM_KEYS, self.wa, self.wb, _idle_items)
        if df.empty:
            return _empty_items()
        na, nb = _names(self.wa), _names(self.wb)
        ma, mb = _memory(self.wa), _memory(self.wb)
        keys = list(zip(df["line"], df["kind"], df["key"], strict=True))
        df["name_base"] = [na.get(k, "") for k in keys]
        df["name_new"] = [nb.get(k, "") for k in keys]
        df["name"] = [n if (not o or o == n) else (o if not n else f"{o} → {n}")
                      for o, n in zip(df["name_base"], df["name_new"], strict=True)]
        df["memory_base"] = [ma.get(k, "") for k in keys]
        df["memory_new"] = [mb.get(k, "") for k in keys]
        df["note"] = [_note(k, s, a, b, ca, cb) for k, s, a, b, ca, cb in zip(
            df["kind"], df["status"], df["memory_base"], df["memory_new"], df["BaseCount"],
            df["NewCount"], strict=True)]
        return order(df[["line", "kind", "name", *_STATS, "BaseCount", "NewCount", "status",
                         "note", "key", "name_base", "name_new", "memory_base", "memory_new"]])

    def lines(self, items):
        wa, wb = self.wa, self.wb
        if self.cpu:  # the sampled lines; a range is no line
            wa, wb = (w[w["kind"] != "range"] if len(w) else w for w in (wa, wb))
            items = items[items["kind"] != "range"]
        df = self._compare(["line"], wa, wb, _idle_part(items).groupby("line").sum())
        if df.empty:
            return df
        top = items.assign(_a=items["DeltaNs"].abs()).sort_values("_a", ascending=False)
        first = top.drop_duplicates("line").set_index("line")
        df["top_item"] = df["line"].map(lambda x: f"{first.loc[x, 'kind']} {first.loc[x, 'name']}"
                                        if x in first.index else "")
        return order(df[["line", *_STATS, "status", "top_item"]])

    def kernels(self, items):
        wa = self.wa[self.wa["kind"].isin(GPU_KINDS)] if len(self.wa) else self.wa
        wb = self.wb[self.wb["kind"].isin(GPU_KINDS)] if len(self.wb) else self.wb
        df = self._compare(["kind", "key"], wa, wb)
        if df.empty:
            return df
        it = items[items["kind"].isin(GPU_KINDS)]
        name = {(k, key): n for k, key, n in zip(it["kind"], it["key"], it["name"], strict=True)}
        lines = it.groupby(["kind", "key"])["line"].agg(lambda s: ", ".join(sorted(set(s))))
        df["name"] = [name.get((k, key), key) for k, key in zip(df["kind"], df["key"], strict=True)]
        df["lines"] = [lines.get((k, key), "") for k, key in zip(df["kind"], df["key"], strict=True)]
        return order(df[["name", "kind", *_STATS, "BaseCount", "NewCount", "status", "lines",
                         "key"]])

    def phases(self, items):
        la = _long(self.pa, "phases", {}).assign(count=0) if self.pa else None
        lb = _long(self.pb, "phases", {}).assign(count=0) if self.pb else None
        idle = pd.Series({"idle": float(_idle_part(items).sum())})
        df = self._compare(["phase"], la, lb, idle, lambda p: p["phase"] == "idle")
        if df.empty:
            return df
        rank = {p: i for i, p in enumerate(PHASES)}
        df = df.iloc[np.argsort([rank.get(p, 99) for p in df["phase"]], kind="stable")]
        return order(df[["phase", *_STATS, "status"]])

    def summary(self, items):
        idle = [float(_idle_part(items).sum())]
        rows = {}
        gpu_a = _measure(self.pa, "GpuNs", self.na, self.have_a)
        gpu_b = _measure(self.pb, "GpuNs", self.nb, self.have_b)
        # the step's time: the mean of its part that is not GPU idle, plus its trimmed idle
        ia, ib = self.idle_a[None, :], self.idle_b[None, :]
        for what, work, part in (
                ("GPU work (sum of op times)", (gpu_a, gpu_b), (None, None)),
                ("GPU idle in the step", (None, None), (ia, ib)),
                ("step time", (self.host_a - self.idle_a, self.host_b - self.idle_b), (ia, ib))):
            if self.cpu and what != "step time":
                continue
            a, b = (None if x is None else x[None, :] for x in work)
            paced = None if part[0] is None else idle
            if what == "step time":
                # Its host-side part: what GPU work does not explain (all of it without GPU
                # work). A line slower while the step is shorter is the host's pace moving more.
                delta = self.r.estimate(b, part[1], 1) - self.r.estimate(a, part[0], 0)
                gpu = 0.0 if self.cpu else rows["GPU work (sum of op times)"]["DeltaNs"]
                paced = [float(delta[0]) - gpu]
            c = self.r.compare(a, b, self.step_ns, paced, *part)
            rows[what] = {"metric": what, **{k: v[0] for k, v in c.items()}}
        order_ = [w for w in ("step time", "GPU work (sum of op times)", "GPU idle in the step")
                  if w in rows]
        df = pd.DataFrame([rows[w] for w in order_])
        df["verdict"] = verdicts(df, repeated=self.r.measured)
        return df[["metric", *_STATS]]


# host: the change is host-paced and was judged against the between-run noise, RunNoiseNs
# (rocpd.diff.runs); noisy: it would count but does not clear that noise
_STATS = ["BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs", "DeltaPercent", "significant",
          "verdict", "host", "RunNoiseNs", "noisy"]


def _runs(procs, n) -> np.ndarray:
    """The run of each step column (rocpd.diff.runs; steps of runs are numbered one after the
    other)."""
    out = np.zeros(n, dtype=int)
    for ps in procs:
        out[ps.steps["step"].to_numpy(dtype=int)] = getattr(ps, "run", 0)
    return out


IDLE_KINDS = ("idle", "sync")  # items whose time is GPU idle (a sync's: the idle after its wait)


def _idle_items(idx, present_a, present_b, delta):
    """The host-paced idle part of each item's change: all of it for GPU idle, and for the idle
    after a wait that both runs make; none for a wait that appeared or vanished (the program
    changed) or for work."""
    kind = idx.get_level_values("kind")
    paced = (kind == "idle") | ((kind == "sync") & present_a & present_b)
    return np.where(paced, delta, 0.0)


def _idle_part(items):
    """The host-paced idle part of the items' changes (see ``_idle_items``), per line."""
    if items.empty:
        return pd.Series(dtype=float, index=pd.Index([], name="line"))
    paced = (items["kind"] == "idle") | ((items["kind"] == "sync") & (items["status"] == "both"))
    return items.loc[paced].set_index("line")["DeltaNs"].astype(float)


def _sites(procs):
    out = set()
    for ps in procs:
        if len(ps.work):
            out |= {s for s in ps.work["line"].unique() if s != NO_LINE}
    return out


def _measure(procs, col, n, have) -> np.ndarray:
    out = np.zeros(n, dtype=float)
    for ps in procs:
        out[ps.measures["step"].to_numpy(dtype=int)] += ps.measures[col].to_numpy(dtype=float)
    return out / have if n else out


def _names(work) -> dict:
    if work.empty:
        return {}
    t = work.groupby(ITEM_KEYS + ["name"])["ns"].sum().reset_index()
    t = t.sort_values("ns", ascending=False).drop_duplicates(ITEM_KEYS)
    return {(a, b, c): n for a, b, c, n in zip(t["line"], t["kind"], t["key"], t["name"], strict=True)}


def _memory(work) -> dict:
    if work.empty:
        return {}
    w = work[work["memory"] != ""]
    t = w.groupby(ITEM_KEYS + ["memory"])["count"].sum().reset_index()
    t = t.sort_values("count", ascending=False).drop_duplicates(ITEM_KEYS)
    return {(a, b, c): m for a, b, c, m in zip(t["line"], t["kind"], t["key"], t["memory"], strict=True)}


def _note(kind, status, mem_a, mem_b, count_a, count_b) -> str:
    if kind == "copy" and status == "both" and mem_a != mem_b:
        if "PAGEABLE" in mem_b and "PAGEABLE" not in mem_a:
            return f"copy became pageable ({mem_a} to {mem_b})"
        if "PAGEABLE" in mem_a and "PAGEABLE" not in mem_b:
            return f"copy no longer pageable ({mem_a} to {mem_b})"
        return f"memory kinds changed ({mem_a} to {mem_b})"
    # a sampled line's count is its time; an idle row's, gaps
    if status == "both" and kind not in ("idle", "sampled") and abs(count_b - count_a) >= 0.5:
        return f"{'more' if count_b > count_a else 'fewer'} per step ({count_a:g} to {count_b:g})"
    return ""


def _empty_items():
    return pd.DataFrame(columns=["line", "kind", "name", *_STATS, "BaseCount", "NewCount", "status",
                                 "note", "key", "name_base", "name_new", "memory_base", "memory_new"])


WHAT = {"kernel": "kernel", "collective": "collective", "copy": "copy", "sync": "sync"}


def appeared(items):
    """What appeared or vanished (kernels, copies, syncs), copies whose memory kind changed and
    work launched more or fewer times per step: one row each, largest time first."""
    cols = ["what", "line", "kind", "name", "BaseCount", "NewCount", "DeltaNs", "significant"]
    if items.empty:
        return pd.DataFrame(columns=cols)
    it = items[items["kind"].isin(list(WHAT))]
    rows = []
    for r in it.itertuples(index=False):
        if r.status in ("new", "vanished"):
            what = f"{r.status} {WHAT[r.kind]}"
        elif r.note:
            what = r.note.split(" (")[0]
        else:
            continue
        rows.append({"what": what, "line": r.line, "kind": r.kind, "name": r.name,
                     "BaseCount": r.BaseCount, "NewCount": r.NewCount, "DeltaNs": r.DeltaNs,
                     "significant": bool(r.significant)})
    df = pd.DataFrame(rows, columns=cols)
    return df.iloc[np.argsort(-df["DeltaNs"].abs().to_numpy(), kind="stable")].reset_index(drop=True)
