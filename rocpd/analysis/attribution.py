"""Tables that point at code: kernel launch statistics per kernel name, GPU time per Python line
(from launch sites), host waits per Python line, and GPU time per ROCTx range."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .sites import short_site
from .spill import pieces_of
from .steps import launch_times

SHORT_KERNEL_NS = 10_000  # "short": under 10 µs, about what one launch costs the host


def _concat(frames, columns):
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def kernel_launch_stats(procs, short_ns: int = SHORT_KERNEL_NS):
    """Per kernel name: GPU duration, the CPU launch call's duration, launch delay (kernel start
    minus launch call start: queueing plus latency), the share of short kernels and of kernels
    that ran shorter than their launch took (HTA's launch-bound test)."""
    cols = ["Name", "Calls", "GpuTotalNs", "GpuMeanNs", "GpuMedianNs", "LaunchMeanNs",
            "LaunchDelayMeanNs", "ShortPercent", "ShorterThanLaunchPercent"]
    used = ["name", "start", "duration", "launch_start", "launch_end"]  # not every column's copy
    k = _concat([p.gpu.loc[(p.gpu["kind"] != "memory").to_numpy(), used] for p in procs], cols)
    if k.empty:
        return k.reindex(columns=cols)
    k = k.assign(api=k["launch_end"] - k["launch_start"], delay=k["start"] - k["launch_start"],
                 short=k["duration"] < short_ns)
    k["faster"] = (k["duration"] < k["api"]).where(k["api"].notna())
    g = k.groupby("name", sort=False)
    out = g.agg(Calls=("duration", "size"), GpuTotalNs=("duration", "sum"),
                GpuMeanNs=("duration", "mean"), GpuMedianNs=("duration", "median"),
                LaunchMeanNs=("api", "mean"), LaunchDelayMeanNs=("delay", "mean"),
                ShortPercent=("short", "mean"), ShorterThanLaunchPercent=("faster", "mean"))
    return launch_table(out)


def launch_table(out):
    """The table from the figures per name (index ``name``, shares as fractions), as
    :func:`kernel_launch_stats` and the streamed tallies (tallies.py) give them."""
    cols = ["Name", "Calls", "GpuTotalNs", "GpuMeanNs", "GpuMedianNs", "LaunchMeanNs",
            "LaunchDelayMeanNs", "ShortPercent", "ShorterThanLaunchPercent"]
    out["ShortPercent"] *= 100.0
    out["ShorterThanLaunchPercent"] = out["ShorterThanLaunchPercent"].astype(float) * 100.0
    out = out.reset_index().rename(columns={"name": "Name"})
    return out.sort_values("GpuTotalNs", ascending=False, ignore_index=True)[cols]


def launch_summary(procs, short_ns: int = SHORT_KERNEL_NS):
    """Per process: kernels, median GPU duration, share of short kernels, mean launch call
    duration, share of kernels shorter than their launch call."""
    rows = []
    for p in procs:
        k = p.gpu[p.gpu["kind"] != "memory"]
        if k.empty:
            continue
        api = k["launch_end"] - k["launch_start"]
        faster = (k["duration"] < api)[api.notna()]
        rows.append({"process": p.label, "rank": p.rank, "pid": p.pid, "Kernels": len(k),
                     "GpuMedianNs": float(k["duration"].median()),
                     "ShortPercent": 100.0 * float((k["duration"] < short_ns).mean()),
                     "LaunchMeanNs": float(api.mean()) if api.notna().any() else float("nan"),
                     "ShorterThanLaunchPercent":
                         100.0 * float(faster.mean()) if len(faster) else float("nan")})
    return pd.DataFrame(rows, columns=["process", "rank", "pid", "Kernels", "GpuMedianNs",
                                       "ShortPercent", "LaunchMeanNs", "ShorterThanLaunchPercent"])


def top_lines(procs, top: int | None = None):
    """GPU time per Python line (the launch site of each kernel/copy), over every process."""
    cols = ["Site", "Function", "GpuTimeNs", "Percent", "Ops", "Kernels", "TopKernel", "Path"]
    g = _concat([p.gpu[["site", "function", "name", "duration"]] for p in procs], cols)
    if g.empty:
        return g.reindex(columns=cols)
    total = float(g["duration"].sum())
    g = g[g["site"].notna()]
    if g.empty:
        return g.reindex(columns=cols)
    by_name = g.groupby(["site", "name"], sort=False)["duration"].sum().reset_index()
    out = g.groupby("site", sort=False).agg(Function=("function", "first"),
                                            GpuTimeNs=("duration", "sum"), Ops=("duration", "size"),
                                            Kernels=("name", "nunique")).reset_index()
    return lines_table(by_name, out, total, top)


def lines_table(by_name, out, total: float, top: int | None = None):
    """The table from the GPU time per (site, name) and the figures per site, in order of first
    appearance, as :func:`top_lines` and the streamed tallies give them."""
    cols = ["Site", "Function", "GpuTimeNs", "Percent", "Ops", "Kernels", "TopKernel", "Path"]
    top_kernel = by_name.sort_values("duration", ascending=False).drop_duplicates("site")
    top_kernel = top_kernel.set_index("site")["name"]
    out["Percent"] = 100.0 * out["GpuTimeNs"] / total if total else 0.0
    out["TopKernel"] = out["site"].map(top_kernel)
    out["Path"] = out["site"]
    out["Site"] = out["site"].map(short_site)
    out = out.sort_values("GpuTimeNs", ascending=False, ignore_index=True)[cols]
    return out.head(top) if top else out


def wait_lines(blocking_by_proc, gaps_by_proc, top: int | None = None):
    """Host waits per Python line: calls that blocked the host (synchronisations, copies to host),
    the host time spent in them and the GPU idle time charged to them."""
    cols = ["Site", "Function", "Kind", "Calls", "BlockedNs", "GpuIdleNs", "Example", "Path"]
    rows = []
    for blocking, gaps in zip(blocking_by_proc, gaps_by_proc, strict=True):
        if blocking.empty:
            continue
        b = blocking.assign(dur=blocking["end"] - blocking["start"], idle=0)
        idle = np.zeros(len(b), dtype=np.int64)
        for g in pieces_of(gaps):  # a streamed process's gaps come in pieces
            charged = g[g["call"] >= 0]
            np.add.at(idle, charged["call"].to_numpy(dtype=np.int64),
                      (charged["end"] - charged["start"]).to_numpy(dtype=np.int64))
        b["idle"] = idle
        rows.append(b)
    if not rows:
        return pd.DataFrame(columns=cols)
    b = pd.concat(rows, ignore_index=True)
    # A call without its own call site is named by the launch it followed.
    # Missing values come back from pandas as NaN (a float), not None.
    after = b["after_site"].map(
        lambda s: f"(after the launch at {short_site(s)})" if isinstance(s, str) and s else None)
    b["site"] = b["site"].fillna(after).fillna("(no Python line recorded)")
    out = b.groupby(["site", "blocking"], sort=False).agg(
        Function=("function", "first"), Calls=("dur", "size"), BlockedNs=("dur", "sum"),
        GpuIdleNs=("idle", "sum"), Example=("name", "first")).reset_index()
    out["Kind"] = out["blocking"].map({"sync": "synchronize", "d2h": "copy to host"})
    out["Path"] = out["site"]
    out["Site"] = out["site"].map(lambda s: s if s.startswith("(") else short_site(s))
    out.loc[out["site"].str.startswith("("), "Path"] = None
    out = out.sort_values(["GpuIdleNs", "BlockedNs"], ascending=False, ignore_index=True)[cols]
    return out.head(top) if top else out


def range_gpu_time(procs, top: int | None = None, inside: dict | None = None,
                   total: int | None = None):
    """Per ROCTx range name: instances, host time inside them, and the GPU time of the work
    launched inside them on the same thread (inclusive of nested ranges). ``inside`` (process
    index -> GPU ns and ops per range) and ``total`` (GPU ns): a streamed analysis's tallies."""
    cols = ["Range", "Instances", "HostNs", "GpuTimeNs", "Ops", "Percent"]
    names, host, gpu, ops = [], [], [], []
    known = total is not None
    total = total or 0
    for i, p in enumerate(procs):
        r = p.ranges
        g = p.gpu
        total += 0 if known else (int(g["duration"].sum()) if len(g) else 0)
        if r.empty:
            continue
        if inside is not None:
            gpu_ns, n_ops = inside[i]
        else:
            gpu_ns = np.zeros(len(r), dtype=np.int64)
            n_ops = np.zeros(len(r), dtype=np.int64)
            if len(g):
                _work_inside(p, r, gpu_ns, n_ops)
        names.append(r["name"].to_numpy(dtype=object))
        host.append((r["end"] - r["start"]).to_numpy())
        gpu.append(gpu_ns)
        ops.append(n_ops)
    if not names:
        return pd.DataFrame(columns=cols)
    # Per name through integer codes and sums over them, not a groupby of the names: with a
    # million distinct names that groupby holds several copies of every row at once.
    codes, uniq = factorize(_joined(names))
    names.clear()
    n = len(uniq)
    # One int64 block for the four counts (what the DataFrame would consolidate them into).
    counts = np.zeros((n, 4), dtype=np.int64)
    counts[:, 0] = np.bincount(codes, minlength=n)
    for j, parts in ((1, host), (2, gpu), (3, ops)):
        col = np.zeros(n, dtype=np.int64)
        np.add.at(col, codes, _joined(parts))
        counts[:, j] = col
        parts.clear()
    del codes, col
    # Most GPU time first, then most host time; ties keep the order of first appearance.
    order = np.lexsort((-counts[:, 1], -counts[:, 2]))
    for j in range(4):  # in place, a column at a time
        counts[:, j] = counts[order, j]
    out = pd.DataFrame(counts, columns=cols[1:5], copy=False)
    del counts
    out.insert(0, "Range", pd.Series(np.asarray(uniq, dtype=object)[order], dtype="str"))
    del uniq, order
    out["Percent"] = 100.0 * out["GpuTimeNs"] / total if total else 0.0
    return out.head(top) if top else out


def _work_inside(p, r, gpu_ns, n_ops) -> None:
    """GPU time and op count of the work launched inside each range of ``r`` on its thread."""
    work_inside(p.gpu, launch_times(p), r, gpu_ns, n_ops)


def work_inside(g, t, r, gpu_ns, n_ops) -> None:
    """:func:`_work_inside` for ops ``g`` launched at ``t`` (a process's, or a chunk: added to)."""
    tid = g["launch_tid"].to_numpy()
    dur = g["duration"].to_numpy()
    rt = r["tid"].to_numpy()
    for th in np.unique(rt):
        sel = np.flatnonzero(tid == th)
        order = sel[np.argsort(t[sel], kind="stable")]
        ts = t[order]
        cum = np.concatenate([[0], np.cumsum(dur[order])])
        ri = np.flatnonzero(rt == th)
        a = np.searchsorted(ts, r["start"].to_numpy()[ri], side="left")
        b = np.searchsorted(ts, r["end"].to_numpy()[ri], side="left")
        gpu_ns[ri] += cum[b] - cum[a]
        n_ops[ri] += b - a


def _joined(parts: list) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize(values, sort=False)`` for an object array of texts (codes numbered by
    first appearance, the distinct values in that order), found by a stable sort: a few integers
    per row, where a hash table sized for every row would take ten times that."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), values[:0]
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(n, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    del ordered
    group = np.cumsum(new) - 1  # of each row in sorted order
    first = order[new]  # stable sort: each group's first row is its first appearance
    del new
    by_appearance = np.argsort(first, kind="stable")
    number = np.empty(len(first), dtype=np.int64)
    number[by_appearance] = np.arange(len(first))
    codes = np.empty(n, dtype=np.int64)
    codes[order] = number[group]
    return codes, values[first[by_appearance]]
