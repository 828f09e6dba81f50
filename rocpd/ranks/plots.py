"""The ranks x steps heat map of :mod:`rocpd.ranks`: a matplotlib figure (PNG through
:func:`rocpd.plots.png`) and the same numbers as plain data for an HTML report (the report
section (heading, image, tables) for ``rocpd.report``."""

from __future__ import annotations

import base64

import numpy as np

from ..io.output_file import write_bytes
from ..plots import _plt, png

METRICS = {"compute_ns": "compute per step (ms)", "duration_ns": "step time (ms)",
           "collective_ns": "time in collectives per step (ms)", "kernels": "kernels per step"}


def default_metric(rep) -> str:
    """Compute per step where steps hold kernels (it shows the straggler; step times are evened
    out by the collectives), else the step time."""
    return "compute_ns" if len(rep.steps) and rep.steps["kernels"].sum() > 0 else "duration_ns"


def heatmap_data(rep, metric: str | None = None) -> dict:
    """JSON-ready: ``{"metric", "label", "range", "ranks": [...], "steps": [...], "values":
    [[per step, ms or count, None where a rank has no such step], ...per rank]}``."""
    metric = metric or default_metric(rep)
    m = rep.matrix(metric)
    scale = 1 if metric == "kernels" else 1e6
    values = [[None if v != v else float(v) / scale for v in row] for row in m.to_numpy().tolist()]
    return {"metric": metric, "label": METRICS[metric], "range": rep.range_name,
            "ranks": [int(r) for r in m.index], "steps": [int(s) for s in m.columns],
            "values": values}


def step_heatmap(rep, metric: str | None = None):
    """Ranks (rows) x steps (columns) coloured by ``metric``; the slowest rank is marked."""
    plt = _plt()
    data = heatmap_data(rep, metric)
    n_ranks, n_steps = len(data["ranks"]), len(data["steps"])
    fig, ax = plt.subplots(figsize=(min(4 + 0.35 * n_steps, 16), min(2 + 0.16 * n_ranks, 14)))
    if not n_ranks:
        ax.text(0.5, 0.5, "no steps", ha="center", va="center")
        ax.set_axis_off()
        return fig
    arr = np.array([[np.nan if v is None else v for v in row] for row in data["values"]])
    im = ax.imshow(arr, aspect="auto", interpolation="nearest", cmap="viridis")
    fig.colorbar(im, ax=ax, label=data["label"])
    step_ticks = range(0, n_steps, max(1, n_steps // 20))
    ax.set_xticks(list(step_ticks), [str(data["steps"][i]) for i in step_ticks])
    rank_ticks = range(0, n_ranks, max(1, n_ranks // 32))
    ax.set_yticks(list(rank_ticks), [str(data["ranks"][i]) for i in rank_ticks], fontsize=7)
    ax.set_xlabel(f"step (ROCTx range \"{data['range']}\")")
    ax.set_ylabel("rank")
    title = f"{data['label']} per rank and step"
    if rep.straggler is not None and rep.straggler in data["ranks"]:
        y = data["ranks"].index(rep.straggler)
        ax.axhline(y, color="#ff4040", linewidth=0.8, linestyle="--")
        title += f"\nslowest: rank {rep.straggler} ({rep.slowest['excess_pct'].iloc[0]:+.1f} % over the median rank)"
    ax.set_title(title, fontsize=10)
    return fig


def heatmap_img(rep, metric: str | None = None) -> str:
    """The heat map as an inline ``<img>`` (base64 PNG data URI): no file beside the HTML."""
    fig = step_heatmap(rep, metric)
    data = base64.b64encode(png(fig)).decode("ascii")
    return f'<img alt="ranks x steps heat map" src="data:image/png;base64,{data}">'


def write_png(rep, path: str, metric: str | None = None) -> str:
    write_bytes(path, png(step_heatmap(rep, metric)))
    return path


__all__ = ["METRICS", "heatmap_data", "heatmap_img", "step_heatmap", "write_png"]
