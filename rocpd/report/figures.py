"""Static (matplotlib, Agg) versions of the report's charts, for ``--format md`` and ``--plots``:
PNG files for CI logs and papers. Same data and colours as the interactive charts."""

from __future__ import annotations

import numpy as np

from ..plots import _plt, _short
from .charts import PARTS

_KIND_COLOURS = {"compute": "#3b75af", "comm": "#8e44ad", "memory": "#ef8636"}


def time_breakdown(a):
    run = a.run
    if run.empty:
        return None
    fig, ax = _plt().subplots(figsize=(10, 0.5 * len(run) + 1.6))
    who = [f"{p} · GPU {g}" for p, g in zip(run["process"], run["gpu"], strict=True)]
    left = np.zeros(len(run))
    for col, label, colour in PARTS:
        ms = (run[col] / 1e6).to_numpy(dtype=float)
        if not ms.any():
            continue
        ax.barh(range(len(run)), ms, left=left, color=colour, label=label)
        left += ms
    ax.set_yticks(range(len(run)), who)
    ax.invert_yaxis()
    ax.set_xlabel("ms, from each GPU's first activity to its last")
    ax.set_title("Where each GPU's time went")
    ax.legend(fontsize=7, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return fig


def step_breakdown(a, max_steps: int = 200):
    ps = a.per_step
    if ps.empty:
        return None
    ps = ps[ps["SpanNs"] > 0]
    first = ps[["process", "gpu"]].iloc[0]
    d = ps[(ps["process"] == first["process"]) & (ps["gpu"] == first["gpu"])].head(max_steps)
    fig, ax = _plt().subplots(figsize=(10, 4))
    bottom = np.zeros(len(d))
    for col, label, colour in PARTS:
        if col == "BetweenStepsNs":
            continue
        ms = (d[col] / 1e6).to_numpy(dtype=float)
        if not ms.any():
            continue
        ax.bar(d["step"], ms, bottom=bottom, color=colour, label=label, width=0.8)
        bottom += ms
    ax.set_xlabel(f"step ('{a.step_name}')")
    ax.set_ylabel("ms of the step's GPU window")
    more = f", first {max_steps}" if len(ps) > max_steps else ""
    ax.set_title(f"Per step: {first['process']} · GPU {first['gpu']}{more}")
    ax.legend(fontsize=7, ncols=3)
    return fig


def launch_scatter(a, top: int = 60):
    ls = a.launch_stats.dropna(subset=["LaunchMeanNs"]).head(top)
    if ls.empty:
        return None
    fig, ax = _plt().subplots(figsize=(7, 5))
    x, y = ls["LaunchMeanNs"] / 1e3, ls["GpuMeanNs"] / 1e3
    size = (ls["Calls"] / ls["Calls"].max()) ** 0.5 * 300 + 10
    sc = ax.scatter(x, y, s=size, c=ls["ShortPercent"], cmap="RdYlBu_r", vmin=0, vmax=100, alpha=0.8)
    lo = max(float(min(x.min(), y.min())) / 2, 0.1)
    hi = float(max(x.max(), y.max())) * 2
    ax.plot([lo, hi], [lo, hi], ":", color="#999", label="GPU time = launch time")
    for name, xi, yi in list(zip(ls["Name"], x, y, strict=True))[:5]:
        ax.annotate(_short(name, 30), (xi, yi), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mean launch call on the host (µs)")
    ax.set_ylabel("mean duration on the GPU (µs)")
    ax.set_title("Kernels: launch cost vs GPU time")
    fig.colorbar(sc, ax=ax, label="% of calls shorter than the short threshold")
    ax.legend(fontsize=7)
    return fig


def top_lines(a, top: int = 15):
    lines = a.lines.head(top)
    if lines.empty:
        return None
    fig, ax = _plt().subplots(figsize=(9, 0.4 * len(lines) + 1.4))
    ax.barh(range(len(lines)), lines["GpuTimeNs"] / 1e6, color="#3b75af")
    ax.set_yticks(range(len(lines)), [f"{s} ({_short(f, 20)})" for s, f in
                                      zip(lines["Site"], lines["Function"].astype(str), strict=True)])
    ax.invert_yaxis()
    ax.set_xlabel("GPU time launched from the line (ms)")
    ax.set_title("Top Python lines by GPU time")
    return fig


def timeline(a, max_slices: int = 50_000):
    """GPU work per process/GPU/stream over the analysed window: the steps when there are steps
    (the first ones, up to ``max_slices`` ops), else from the first GPU activity."""
    procs = [p for p in a.processes if p.gpu_ops]
    if not procs:
        return None
    lo = min(p.gpu_span()[0] for p in procs)
    if len(a.steps):
        lo = min(lo, int(a.steps["start"].min()))
    rows = []
    total = 0  # ops in all (a streamed process's rows are its streams' first ops)
    for p in procs:
        for (agent, stream), ops, n in p.gpu_streams():
            idx = p.agents.get(int(agent), (int(agent), ""))[0]
            rows.append((f"{p.label} · GPU {idx} · {p.streams.get(int(stream), stream)}", ops))
            total += n
    allstarts = np.sort(np.concatenate([o["start"].to_numpy() for _, o in rows]))
    hi_cut = allstarts[min(max_slices, allstarts.size) - 1]
    fig, ax = _plt().subplots(figsize=(12, 0.5 * len(rows) + 1.8))
    for i, (_, ops) in enumerate(rows):
        ops = ops[ops["start"] <= hi_cut]
        for kind, colour in _KIND_COLOURS.items():
            k = ops[ops["kind"] == kind]
            if len(k):
                ax.broken_barh(list(zip((k["start"] - lo) / 1e6,
                                        np.maximum(k["end"] - k["start"], 1) / 1e6, strict=True)),
                               (i - 0.4, 0.8), facecolors=colour, label=kind)
    steps = a.steps
    if "Detail" in steps:  # a bounded run: the steps whose records were kept
        steps = steps[steps["Detail"]]
    if len(steps):
        for s in steps[steps["start"] <= hi_cut].itertuples():
            if s.step % 2 == 0:
                ax.axvspan((s.start - lo) / 1e6, (s.end - lo) / 1e6, color="#5a9e56", alpha=0.08)
    ax.set_yticks(range(len(rows)), [_short(r[0], 40) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("ms from the first " + ("step" if len(a.steps) else "GPU activity"))
    shown = f" (first {max_slices} ops)" if total > max_slices else ""
    ax.set_title(f"GPU timeline{shown}; shaded: every other step")
    handles, names = ax.get_legend_handles_labels()
    uniq = dict(zip(names, handles, strict=True))
    ax.legend(uniq.values(), uniq.keys(), loc="upper right", fontsize=8)
    return fig
