"""Roofline (rocprof-compute's empirical roofline, Nsight Compute's roofline chart): arithmetic
intensity (FLOP per DRAM byte) against achieved FLOP/s, one point per kernel, a roof per
precision (its peak FLOP/s, flat) meeting the memory roof (DRAM bandwidth x intensity) at its
ridge point. Roofs use the measured (empirical) peaks where the run has them, else the
theoretical ones, and say which.

For the HTML report: :func:`figure` returns a matplotlib Figure (no pyplot), :func:`png_bytes`
its PNG; :func:`write_png` writes a file. All take a Connection (or a computed
:class:`rocpd.counters.sol.SolResult`) and the shared filters. The `rocpd report` section is
:func:`rocpd.counters.section.report_section`.
"""

from __future__ import annotations

import math

import pandas as pd

from rocshared import kernel_metrics as m
from rocshared.units import si

from ..io.output_file import write_bytes
from ..plots import _plt, _short, png
from . import sol as _sol

# One colour per precision, tensor paths solid and scalar paths dashed.
_COLORS = {"tensor_fp64": "#6a3d9a", "tensor_tf32": "#1f78b4", "tensor_bf16": "#e31a1c",
           "tensor_fp16": "#ff7f00", "tensor_fp8": "#b15928", "tensor_int8": "#999999",
           "fp64": "#6a3d9a", "fp32": "#1f78b4", "fp16": "#ff7f00"}


def _result(db_or_result, peaks_file=None, **filters) -> _sol.SolResult:
    if isinstance(db_or_result, _sol.SolResult):
        return db_or_result
    return _sol.compute(db_or_result, peaks_file=peaks_file, **filters)


def points(res: _sol.SolResult):
    """One row per kernel with a place on the chart: agent, kernel, intensity (FLOP/byte of DRAM
    traffic), FLOP/s (all floating-point precisions together), its dominant precision."""
    k = res.kernels
    if k is None or len(k) == 0:
        return pd.DataFrame(columns=["agent_id", "kernel", "intensity", "flops_per_second", "precision",
                                     "seconds"])
    out = pd.DataFrame({"agent_id": k["agent_id"], "kernel": k["kernel_name"],
                        "intensity": k["intensity_dram"], "flops_per_second": k["rate_flops_total"],
                        "precision": [_sol.dominant(r) for _, r in k.iterrows()],
                        "seconds": k["seconds"]})
    ok = out["intensity"].notna() & (out["intensity"] > 0) & (out["flops_per_second"] > 0)
    return out[ok].reset_index(drop=True)


def roofs(pk: _sol.Peaks) -> tuple[float | None, str, dict[str, tuple[float, str]]]:
    """(DRAM bytes/s, its kind, {precision: (FLOP/s, kind)}): each roof empirical where
    measured, else theoretical."""
    def pick(key):
        if pk.empirical.get(key):
            return float(pk.empirical[key]), "empirical"
        if pk.theoretical.get(key):
            return float(pk.theoretical[key]), "theoretical"
        return None, ""

    bw, bw_kind = pick("dram")
    flops = {}
    for p in m.PRECISIONS:
        v, kind = pick(p.key)
        if v and p.unit == "FLOP/s":
            flops[p.key] = (v, kind)
    return bw, bw_kind, flops


def figure(db_or_result, agent_id: int | None = None, peaks_file: str | None = None, **filters):
    """The roofline of one GPU (the first with counters when ``agent_id`` is None)."""
    plt = _plt()
    res = _result(db_or_result, peaks_file, **filters)
    fig, ax = plt.subplots(figsize=(10, 6.5))
    if not res.peaks:
        ax.text(0.5, 0.5, "no hardware counters (profile with rocprof run --sol)", ha="center",
                va="center")
        ax.set_axis_off()
        return fig
    aid = agent_id if agent_id is not None else next(iter(res.peaks))
    pk = res.peaks[aid]
    pts = points(res)
    pts = pts[pts["agent_id"] == aid]
    bw, bw_kind, flops = roofs(pk)
    xs = [v for v in pts["intensity"]] or [1.0]
    lo = min(min(xs) / 10, 0.01)
    hi = max(max(xs) * 10, 1e4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    labels = {p.key: p.label for p in m.PRECISIONS}
    top = max((v for v, _ in flops.values()), default=1e12)
    # Precisions with the same roof (BF16 and FP16 tensor) share one line and one label.
    same: dict[tuple, list[str]] = {}
    for key, (peak, kind) in flops.items():
        same.setdefault((round(peak, -9), kind, key.startswith("tensor_")), []).append(key)
    for (peak, kind, tensor), keys in sorted(same.items(), key=lambda kv: -kv[0][0]):
        name = "/".join(labels.get(k, k).replace(" tensor", "") for k in keys)
        name += " tensor" if tensor else ""
        style = dict(color=_COLORS.get(keys[0], "#555"), lw=1.3)
        if bw:
            ridge = peak / bw
            ax.plot([lo, ridge, hi], [bw * lo, peak, peak], "-" if tensor else "--", **style,
                    label=f"{name} {si(peak, 'FLOP/s')} {kind} (ridge {ridge:.3g} FLOP/B)")
        else:  # no memory roof to meet: the compute roof alone
            ax.plot([lo, hi], [peak, peak], "-" if tensor else "--", **style,
                    label=f"{name} {si(peak, 'FLOP/s')} {kind}")
    if bw:
        ax.plot([lo, top / bw], [bw * lo, top], "-", color="#333", lw=2,
                label=f"DRAM {si(bw, 'B/s')} {bw_kind}")
    else:
        ax.text(0.02, 0.97, "no DRAM bandwidth peak for this GPU: no memory roof (rocprof peaks "
                "measures one)", transform=ax.transAxes, fontsize=8, va="top")
    for _, r in pts.iterrows():
        size = 30 + 170 * math.sqrt(r["seconds"] / max(pts["seconds"].max(), 1e-12))
        ax.scatter([r["intensity"]], [r["flops_per_second"]], s=size, zorder=5,
                   color=_COLORS.get(r["precision"], "#222"), edgecolor="black", linewidth=0.6)
        ax.annotate(_short(r["kernel"], 36), (r["intensity"], r["flops_per_second"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=7)
    ax.set_xlim(lo, hi)
    ymin = min([bw * lo if bw else top * 1e-4] + list(pts["flops_per_second"] / 3))
    ax.set_ylim(max(ymin, top * 1e-7), top * 3)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(f"Roofline: {pk.device} (point size ~ kernel time)")
    ax.grid(True, which="both", alpha=0.25)
    if ax.get_legend_handles_labels()[0]:  # a GPU with no peaks at all has no roof to name
        ax.legend(fontsize=7, loc="lower right")
    return fig


def png_bytes(db_or_result, agent_id: int | None = None, dpi: int = 100, **filters) -> bytes:
    return png(figure(db_or_result, agent_id, **filters), dpi=dpi)


def write_png(db_or_result, path: str, agent_id: int | None = None, dpi: int = 100, **filters) -> str:
    """Write the roofline PNG to ``path``; returns the path."""
    write_bytes(path, png_bytes(db_or_result, agent_id, dpi=dpi, **filters))
    return path
