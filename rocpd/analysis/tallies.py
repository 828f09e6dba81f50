"""The tables of rocpd.analysis.attribution that read every GPU op (kernel launch statistics,
the launch summary, GPU time per line and per ROCTx range), tallied a chunk of ops at a time for
a streamed analysis and finished by attribution's own code, so that the tables are the
in-memory ones: integer sums (exact, and exact as float64 below 2^53 ns, which is what pandas'
means sum), counts, names and sites kept in order of first appearance (the order pandas'
groupby gives and its sorts break ties by), the first function seen per line. Medians need
every duration: they are kept per process and name, 8 bytes per kernel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import attribution
from .gpuload import text_is
from .steps import times_of


class LaunchTally:
    """kernel_launch_stats and launch_summary."""

    def __init__(self, short_ns: int):
        self.short_ns = short_ns
        self.names: dict = {}  # name -> [calls, total, api sum, api n, delay sum, delay n, short, faster]
        self.durations: dict = {}  # name -> [(process index, durations)]
        self.procs: dict = {}  # process index -> [kernels, short, api sum, api n, faster]

    def feed(self, i: int, chunk) -> None:
        k = chunk[~text_is(chunk["kind"], "memory")]
        if k.empty:
            return
        dur = k["duration"].to_numpy(dtype=np.int64)
        ls = k["launch_start"].to_numpy(dtype=float)
        api = k["launch_end"].to_numpy(dtype=float) - ls
        known = ~np.isnan(api)
        delay = k["start"].to_numpy(dtype=np.int64) - ls
        short = dur < self.short_ns
        faster = known & (dur < api)
        codes, uniq = pd.factorize(k["name"].to_numpy(dtype=object), use_na_sentinel=False)
        n = len(uniq)

        def per(values):
            return np.bincount(codes, weights=values, minlength=n) if values.dtype != bool \
                else np.bincount(codes[values], minlength=n)
        calls = np.bincount(codes, minlength=n)
        total = np.zeros(n, dtype=np.int64)
        np.add.at(total, codes, dur)
        sums = [calls, total, per(np.where(known, api, 0.0)), per(known),
                per(np.where(known, delay, 0.0)), per(known), per(short), per(faster)]
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(calls)[:-1]
        by_code = np.split(dur[order], bounds)
        for j, name in enumerate(uniq):
            row = self.names.setdefault(name, [0] * 8)
            for m, s in enumerate(sums):
                row[m] += s[j].item()
            self.durations.setdefault(name, []).append((i, by_code[j]))
        pr = self.procs.setdefault(i, [0, 0, 0.0, 0, 0])
        pr[0] += len(k)
        pr[1] += int(short.sum())
        pr[2] += float(api[known].sum())
        pr[3] += int(known.sum())
        pr[4] += int(faster.sum())

    def stats(self):
        cols = ["Name", "Calls", "GpuTotalNs", "GpuMeanNs", "GpuMedianNs", "LaunchMeanNs",
                "LaunchDelayMeanNs", "ShortPercent", "ShorterThanLaunchPercent"]
        if not self.names:
            return pd.DataFrame(columns=cols)
        rows = []
        for name, (calls, total, api, api_n, delay, delay_n, short, faster) in self.names.items():
            d = np.concatenate([a for _, a in self.durations[name]])
            rows.append((calls, total, total / calls, float(np.median(d)),
                         api / api_n if api_n else np.nan, delay / delay_n if delay_n else np.nan,
                         short / calls, faster / api_n if api_n else np.nan))
        out = pd.DataFrame(rows, columns=cols[1:],
                           index=pd.Index(list(self.names), dtype=object, name="name"))
        return attribution.launch_table(out)

    def summary(self, procs):
        rows = []
        for i, p in enumerate(procs):
            if i not in self.procs:
                continue
            n, short, api, api_n, faster = self.procs[i]
            d = np.concatenate([a for parts in self.durations.values() for j, a in parts
                                if j == i])
            rows.append({"process": p.label, "rank": p.rank, "pid": p.pid, "Kernels": n,
                         "GpuMedianNs": float(np.median(d)),
                         "ShortPercent": 100.0 * (short / n),
                         "LaunchMeanNs": api / api_n if api_n else float("nan"),
                         "ShorterThanLaunchPercent":
                             100.0 * (faster / api_n) if api_n else float("nan")})
        return pd.DataFrame(rows, columns=["process", "rank", "pid", "Kernels", "GpuMedianNs",
                                           "ShortPercent", "LaunchMeanNs",
                                           "ShorterThanLaunchPercent"])


class LinesTally:
    """top_lines: GPU time per (site, name) and per site, first function per site."""

    def __init__(self):
        self.total = 0
        self.pairs: dict = {}  # (site, name) -> ns
        self.sites: dict = {}  # site -> [function, ns, ops]

    def feed(self, chunk) -> None:
        self.total += int(chunk["duration"].sum())
        g = chunk[chunk["site"].notna().to_numpy()]
        if g.empty:
            return
        for (site, name), ns in g.groupby(["site", "name"], sort=False)["duration"].sum().items():
            self.pairs[(site, name)] = self.pairs.get((site, name), 0) + int(ns)
        agg = g.groupby("site", sort=False).agg(f=("function", "first"), ns=("duration", "sum"),
                                                 ops=("duration", "size"))
        for site, f, ns, ops in zip(agg.index, agg["f"], agg["ns"], agg["ops"], strict=True):
            row = self.sites.setdefault(site, [None, 0, 0])
            if row[0] is None and isinstance(f, str):
                row[0] = f
            row[1] += int(ns)
            row[2] += int(ops)

    def table(self):
        cols = ["Site", "Function", "GpuTimeNs", "Percent", "Ops", "Kernels", "TopKernel", "Path"]
        if not self.sites:
            return pd.DataFrame(columns=cols)
        by_name = pd.DataFrame([(s, n, ns) for (s, n), ns in self.pairs.items()],
                               columns=["site", "name", "duration"])
        kinds = by_name.groupby("site", sort=False).size()
        out = pd.DataFrame({"site": pd.Series(list(self.sites), dtype=object),
                            "Function": pd.Series([r[0] for r in self.sites.values()], dtype=object),
                            "GpuTimeNs": np.array([r[1] for r in self.sites.values()], dtype=np.int64),
                            "Ops": np.array([r[2] for r in self.sites.values()], dtype=np.int64)})
        out["Kernels"] = out["site"].map(kinds).astype(np.int64)
        return attribution.lines_table(by_name, out, float(self.total))


class RangesTally:
    """range_gpu_time: GPU time and ops launched inside each range, per process."""

    def __init__(self, procs):
        self.procs = procs
        self.inside = {i: (np.zeros(len(p.ranges), dtype=np.int64),
                           np.zeros(len(p.ranges), dtype=np.int64)) for i, p in enumerate(procs)}

    def feed(self, i: int, chunk) -> None:
        r = self.procs[i].ranges
        if len(r) and len(chunk):
            attribution.work_inside(chunk, times_of(chunk), r, *self.inside[i])


class AfterSites:
    """blocking_calls' ``after_site`` of a streamed process: the line of the last op launched
    before each blocking call on its thread (the latest launch, the later op among equal ones)."""

    def __init__(self, blocking):
        self.blocking = blocking
        self.best = np.full(len(blocking), -np.inf)
        self.site = np.full(len(blocking), None, dtype=object)

    def feed(self, chunk) -> None:
        b = self.blocking
        if b.empty:
            return
        g = chunk[chunk["launch_start"].notna().to_numpy()]
        for tid in b["tid"].unique():
            launched = g[g["launch_tid"] == tid].sort_values("launch_start", kind="stable")
            if launched.empty:
                continue
            rows = np.flatnonzero(b["tid"].to_numpy() == tid)
            ls = launched["launch_start"].to_numpy()
            j = np.searchsorted(ls, b["start"].to_numpy()[rows], side="right") - 1
            ok = j >= 0
            at = ls[np.maximum(j, 0)]
            better = ok & (at >= self.best[rows])
            self.best[rows[better]] = at[better]
            self.site[rows[better]] = launched["site"].to_numpy()[j[better]]

    def finish(self):
        if len(self.blocking):  # an empty one keeps blocking_calls' own (empty) column
            self.blocking["after_site"] = self.site
        return self.blocking


class Heads:
    """The first ``n`` ops of each (GPU, stream) of a streamed process and how many there are:
    what the report's timeline draws of it (its first slices by start, up to a budget)."""

    COLUMNS = ["agent", "stream", "start", "end", "name", "kind", "site"]

    def __init__(self, n: int):
        self.n = n
        self.kept: dict = {}  # (agent, stream) -> [frames]
        self.counts: dict = {}

    def feed(self, chunk) -> None:
        for key, rows in chunk.groupby(["agent", "stream"], sort=False).indices.items():
            key = (int(key[0]), int(key[1]))
            have = self.counts.get(key, 0)
            self.counts[key] = have + len(rows)
            room = max(0, self.n - have)
            if room:
                self.kept.setdefault(key, []).append(chunk.iloc[rows[:room]][self.COLUMNS])

    def frame(self):
        parts = [f for key in sorted(self.kept) for f in self.kept[key]]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=self.COLUMNS)
