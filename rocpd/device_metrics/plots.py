"""Sampled counters (device and host metrics, ``rocprof run --process-freq``) against time: one
panel per counter, one line per device (a per-core counter's cores share its panel). Drawn with
matplotlib's Agg, no pyplot, like :mod:`rocpd.plots`; ``rocpd plot`` writes it to a PNG."""

from __future__ import annotations

from ..errors import RocpdError
from ..plots import _plt
from . import samples as _metrics
from .gpu_metrics import CATEGORIES as STEP_CATEGORIES

# Per-core counters ("cpu_load [3]") are one panel per counter, not per core.
_PER_CORE = ("cpu_load [", "cpu_frequency [")


def _panel(metric: str) -> str:
    for prefix in _PER_CORE:
        if metric.startswith(prefix):
            return prefix[:-2]
    return metric


def metrics_over_time(db, metrics=None, **filters):
    """Figure of the sampled counters named in ``metrics`` (counter or track names; None: all)
    against seconds from the first value. Raises RocpdError naming what exists when a requested
    counter has no values, or when the databases hold no sampled counters at all."""
    _plt()  # a one-line error without matplotlib
    from matplotlib.figure import Figure

    df = _metrics.samples(db, None, **filters)
    if df.empty:
        raise RocpdError("no sampled counters in these databases (record them with rocprof run "
                         "--process-freq)")
    if metrics is not None:
        wanted = [metrics] if isinstance(metrics, str) else list(metrics)
        known = set(df["metric"]) | set(df["track"]) | {_panel(m) for m in df["metric"]}
        missing = [m for m in wanted if m not in known]
        if missing:
            raise RocpdError(f"no sampled counter named {', '.join(missing)}; these have values: "
                             f"{', '.join(sorted({_panel(m) for m in df['metric']}))}")
        df = df[df["metric"].isin(wanted) | df["track"].isin(wanted)
                | df["metric"].map(_panel).isin(wanted)]
    df = df.assign(panel=df["metric"].map(_panel))
    t0 = df["timestamp"].min()
    panels = list(dict.fromkeys(df.sort_values(["agent", "panel"])["panel"]))
    fig = Figure(figsize=(11, 2.2 * len(panels) + 0.8), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        part = df[df["panel"] == panel]
        procs = part[["host", "pid"]].drop_duplicates()
        for (host, pid, track), g in part.groupby(["host", "pid", "track"], sort=True,
                                                  dropna=False):
            label = track if len(procs) == 1 else f"{track} (pid {pid})" \
                if procs["host"].nunique() == 1 else f"{track} ({host}, pid {pid})"
            # The PM sampler's values hold until the next one (repeats are not stored): steps.
            steps = g["category"].isin(STEP_CATEGORIES).any()
            ax.plot((g["timestamp"] - t0) / 1e9, g["value"], label=label, linewidth=1.2,
                    drawstyle="steps-post" if steps else "default")
        units = part["units"].dropna()
        ax.set_ylabel(units.iloc[0] if len(units) and units.iloc[0] else "value")
        ax.set_title(panel, fontsize=9, loc="left")
        if part["track"].nunique() <= 8:
            ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("seconds from the first value")
    return fig
