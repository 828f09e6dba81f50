"""Interactive charts of the HTML report, made with plotly (plotly.js is inlined once per page by
:mod:`rocpd.report.html`; figures here are divs that use it). Plotly because its charts come with
hover, zoom, legend toggling and click events without extra code, it is maintained, and the same
figures display in notebooks (``fig.show()``). The timeline is not a plotly figure: 100k+ slices
are drawn by the report's own canvas renderer (timeline.js)."""

from __future__ import annotations

import json

import numpy as np

from ..errors import RocpdError

PARTS = [  # (column, label, colour): the stacked parts of a GPU's time, as the timeline colours them
    ("ComputeNs", "compute", "#3b75af"),
    ("CommunicationNs", "communication", "#8e44ad"),
    ("MemoryNs", "memory copy/set", "#ef8636"),
    ("HostLateNs", "idle: host late", "#f2c14e"),
    ("SyncNs", "idle: host waits (sync)", "#c0392b"),
    ("BetweenStepsNs", "idle: between steps", "#b8c4ce"),
    ("OtherNs", "idle: other", "#dde3e8"),
    ("UnknownNs", "idle: cause unknown", "#eceff1"),
]
CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2}}


def available() -> bool:
    try:
        import plotly  # noqa: F401
    except ImportError:
        return False
    return True


def go():
    try:
        import plotly.graph_objects as go_
    except ImportError:
        raise RocpdError("the HTML report needs plotly (pip install plotly)") from None
    return go_


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def div(fig, post_script: str | None = None) -> str:
    """A figure as a <div> for a page that already loaded plotly.js."""
    return fig.to_html(full_html=False, include_plotlyjs=False, config=CONFIG,
                       post_script=post_script)


def _layout(fig, title: str, height: int, **kw):
    fig.update_layout(title=dict(text=title, x=0, font=dict(size=14)), height=height,
                      margin=dict(l=10, r=10, t=40, b=40), barmode="stack",
                      legend=dict(orientation="h", y=-0.15), template="plotly_white", **kw)
    return fig


def time_breakdown(a):
    """One horizontal stacked bar per process and GPU: where its time went over the run."""
    g = go()
    run = a.run
    fig = g.Figure()
    if run.empty:
        return None
    who = [f"{p} · GPU {gpu}" for p, gpu in zip(run["process"], run["gpu"], strict=True)]
    for col, label, colour in PARTS:
        ms = run[col] / 1e6 if col in run else None
        if ms is None or not ms.any():
            continue
        pct = 100.0 * run[col] / run["SpanNs"].where(run["SpanNs"] > 0)
        fig.add_bar(y=who, x=ms, name=label, orientation="h", marker_color=colour,
                    customdata=pct.fillna(0), hovertemplate="%{y}<br>" + label +
                    ": %{x:.3f} ms (%{customdata:.1f} %)<extra></extra>")
    fig.update_xaxes(title_text="ms, from each GPU's first activity to its last")
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Where each GPU's time went", 120 + 28 * len(who))


def step_breakdown(a):
    """Stacked bars per step (one set per process, chosen in a menu): compute, communication,
    memory and the idle causes. Clicking a bar zooms the timeline to that step."""
    g = go()
    ps = a.per_step
    if ps.empty:
        return None
    ps = ps[ps["SpanNs"] > 0]
    keys = list(dict.fromkeys(zip(ps["process"], ps["gpu"], strict=True)))
    fig = g.Figure()
    groups = {p.label: i for i, p in enumerate(a.processes)}
    vis_sets = []
    for k, (proc, gpu) in enumerate(keys):
        d = ps[(ps["process"] == proc) & (ps["gpu"] == gpu)]
        made = 0
        for col, label, colour in PARTS:
            if col not in d or col == "BetweenStepsNs" or not ps[col].any():
                continue
            fig.add_bar(x=d["step"], y=d[col] / 1e6, name=label, marker_color=colour,
                        visible=k == 0, legendgroup=label, showlegend=True,
                        customdata=np.column_stack([np.full(len(d), groups.get(proc, 0)),
                                                    d["step"].to_numpy(),
                                                    d["step_name"].astype(str).to_numpy()]),
                        hovertemplate="step %{x} (%{customdata[2]})<br>" + label +
                        ": %{y:.3f} ms<extra></extra>")
            made += 1
        vis_sets.append(made)
    total = sum(vis_sets)
    buttons = []
    at = 0
    for (proc, gpu), n in zip(keys, vis_sets, strict=True):
        vis = [False] * total
        vis[at:at + n] = [True] * n
        at += n
        buttons.append(dict(label=f"{proc} · GPU {gpu}", method="update", args=[{"visible": vis}]))
    if len(buttons) > 1:
        fig.update_layout(updatemenus=[dict(buttons=buttons, x=1, xanchor="right", y=1.15)])
    fig.update_xaxes(title_text=f"step ('{a.step_name}'); click a bar to see it on the timeline")
    fig.update_yaxes(title_text="ms of the step's GPU window")
    return _layout(fig, "Per step: compute, communication, memory and idle", 380)


STEP_CLICK = """
var gd = document.getElementById('{plot_id}');
gd.on('plotly_click', function (ev) {
  var p = ev.points && ev.points[0];
  if (p && p.customdata && window.rocpdTimeline) window.rocpdTimeline.step(p.customdata[0], p.customdata[1]);
});
"""


def launch_scatter(a, top: int = 60):
    """Per kernel name: mean launch call (host) vs mean GPU duration; under the diagonal the GPU
    finishes the kernel sooner than the host can launch the next: launch-bound."""
    g = go()
    ls = a.launch_stats.dropna(subset=["LaunchMeanNs"]).head(top)
    if ls.empty:
        return None
    fig = g.Figure()
    size = (ls["Calls"] / ls["Calls"].max()) ** 0.5 * 30 + 6
    fig.add_scatter(x=ls["LaunchMeanNs"] / 1e3, y=ls["GpuMeanNs"] / 1e3, mode="markers",
                    marker=dict(size=size, color=ls["ShortPercent"], colorscale="RdYlBu_r",
                                cmin=0, cmax=100, colorbar=dict(title="% < short"), opacity=0.8),
                    text=[str(n)[:120] for n in ls["Name"]],
                    customdata=ls[["Calls", "LaunchDelayMeanNs"]].assign(
                        LaunchDelayMeanNs=ls["LaunchDelayMeanNs"] / 1e3).to_numpy(),
                    hovertemplate="%{text}<br>%{customdata[0]} calls<br>launch call %{x:.1f} µs"
                    "<br>on the GPU %{y:.1f} µs<br>launch delay %{customdata[1]:.1f} µs"
                    "<extra></extra>", showlegend=False)
    lo = float(min((ls["LaunchMeanNs"].min(), ls["GpuMeanNs"].min()))) / 1e3
    hi = float(max((ls["LaunchMeanNs"].max(), ls["GpuMeanNs"].max()))) / 1e3
    lo, hi = max(lo / 2, 0.1), hi * 2
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dot", color="#999"),
                    name="GPU time = launch time", hoverinfo="skip")
    fig.update_xaxes(type="log", title_text="mean launch call on the host (µs)")
    fig.update_yaxes(type="log", title_text="mean duration on the GPU (µs)")
    return _layout(fig, "Kernels: launch cost vs GPU time (below the line: launch-bound)", 420)


def top_lines(a, top: int = 15):
    g = go()
    lines = a.lines.head(top)
    if lines.empty:
        return None
    fig = g.Figure()
    fig.add_bar(y=lines["Site"], x=lines["GpuTimeNs"] / 1e6, orientation="h",
                marker_color="#3b75af",
                customdata=lines[["Function", "Ops", "Percent"]].astype(str).to_numpy(),
                text=[str(k)[:60] for k in lines["TopKernel"]],
                hovertemplate="%{y} in %{customdata[0]}<br>%{x:.3f} ms (%{customdata[2]} %), "
                "%{customdata[1]} launches<br>top kernel: %{text}<extra></extra>")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="GPU time launched from the line (ms)")
    fig.update_traces(textposition="none")
    return _layout(fig, "Top Python lines by GPU time", 120 + 26 * len(lines), showlegend=False)


def to_json(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))
