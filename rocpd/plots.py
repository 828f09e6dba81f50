"""matplotlib figures (rendered with Agg, no display and no pyplot needed): top kernels, GPU timeline per stream, per-rank
imbalance. Each function takes a :class:`rocpd.Connection` and the shared filters and returns a
matplotlib Figure; :func:`png` turns one into PNG bytes (for files or the HTML report)."""

from __future__ import annotations

import io

import pandas as pd

from .errors import RocpdError
from .io.filters import Filter, name_mask, resolve


class _Figures:
    """Figures made without pyplot: no global figure list to leak into, no backend switch in the
    caller's notebook; saving renders with Agg."""

    @staticmethod
    def subplots(figsize, layout="constrained"):
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize, layout=layout)
        return fig, fig.subplots()


def _plt():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise RocpdError("plots need matplotlib (pip install matplotlib)") from None
    return _Figures


def _short(name: str, width: int = 48) -> str:
    name = str(name)
    return name if len(name) <= width else name[: width - 1] + "…"


def top_kernels(db, top: int = 15, **filters):
    """Horizontal bars: total time (ms) of the ``top`` kernels by total time, calls as labels."""
    plt = _plt()
    df = db.kernel_stats(**filters).head(top)
    fig, ax = plt.subplots(figsize=(10, 0.45 * max(len(df), 2) + 1.4))
    if df.empty:
        ax.text(0.5, 0.5, "no kernel dispatches", ha="center", va="center")
        ax.set_axis_off()
        return fig
    ms = df["TotalDurationNs"] / 1e6
    bars = ax.barh(range(len(df)), ms, color="#3b75af")
    ax.set_yticks(range(len(df)), [_short(n) for n in df["Name"]])
    ax.invert_yaxis()
    for bar, calls, pct in zip(bars, df["Calls"], df["Percentage"], strict=True):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {calls} calls, {pct:.1f}%",
                va="center", fontsize=8)
    ax.set_xlabel("total time (ms)")
    ax.set_title(f"Top {len(df)} kernels by total time")
    ax.margins(x=0.25)
    return fig


def timeline_rows(db, max_slices: int = 20_000, **filters):
    """(rows, total): rows are (track label, start ns, end ns, kind) for the first ``max_slices``
    kernels and copies by start time; total counts all of them."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    sql = (f"SELECT * FROM (SELECT 'kernel' AS kind, name, pid, agent_abs_index AS agent, stream_id,"
           f' stream, start, "end" FROM kernels WHERE {where} UNION ALL SELECT \'copy\', name, pid,'
           f' dst_agent_abs_index, stream_id, stream_name, start, "end" FROM memory_copies WHERE {where})'
           f" ORDER BY start LIMIT ?")
    count_sql = (f"SELECT (SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE {where})"
                 f" + (SELECT COUNT(*) FROM rocpd_memory_copy WHERE {where})")
    rows, total = [], 0
    for f in db.sources():
        total += f.conn.execute(count_sql, [*params, *params]).fetchone()[0]
        got = f.conn.execute(sql, [*params, *params, max_slices]).fetchall()
        if flt.include or flt.exclude:
            keep = name_mask(pd.Series([r[1] for r in got]), flt).tolist()
            got = [r for r, k in zip(got, keep, strict=True) if k or r[0] == "copy"]
        rows += [(f"pid {pid} · GPU {agent} · {stream or f'Stream {sid}'}", s, e, kind)
                 for kind, _, pid, agent, sid, stream, s, e in got]
    rows.sort(key=lambda r: r[1])
    return rows[:max_slices], total


def gpu_timeline(db, max_slices: int = 20_000, **filters):
    """One row per process/GPU/stream; kernels blue, copies orange; time in ms from the first one."""
    plt = _plt()
    rows, total = timeline_rows(db, max_slices, **filters)
    labels = sorted({r[0] for r in rows})
    fig, ax = plt.subplots(figsize=(12, 0.5 * max(len(labels), 2) + 1.6))
    if not rows:
        ax.text(0.5, 0.5, "no GPU activity", ha="center", va="center")
        ax.set_axis_off()
        return fig
    t0 = rows[0][1]
    for i, label in enumerate(labels):
        for kind, color in (("kernel", "#3b75af"), ("copy", "#ef8636")):
            bars = [((s - t0) / 1e6, max(e - s, 1) / 1e6) for lab, s, e, k in rows if lab == label and k == kind]
            if bars:
                ax.broken_barh(bars, (i - 0.4, 0.8), facecolors=color, label=kind)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("time since first GPU activity (ms)")
    shown = f" (first {len(rows)} of {total})" if total > len(rows) else ""
    ax.set_title(f"GPU timeline per stream{shown}")
    handles, names = ax.get_legend_handles_labels()
    uniq = dict(zip(names, handles, strict=True))
    ax.legend(uniq.values(), uniq.keys(), loc="upper right", fontsize=8)
    return fig


def imbalance_table(db, **filters):
    """Total kernel time per rank (per process where no rank is recorded), with the deviation from
    the mean: columns Who, KernelTimeNs, Calls, VsMeanPercent."""
    ranks = db.rank_of()
    by = "rank" if any(r is not None for r in ranks.values()) else "pid"
    df = db.kernel_stats(by=by, **filters)
    if df.empty:
        return pd.DataFrame(columns=["Who", "KernelTimeNs", "Calls", "VsMeanPercent"])
    g = df.groupby(by, dropna=False).agg(KernelTimeNs=("TotalDurationNs", "sum"), Calls=("Calls", "sum"))
    g = g.reset_index().sort_values(by)
    mean = g["KernelTimeNs"].mean()
    g["Who"] = [f"{by} {v}" for v in g[by]]
    g["VsMeanPercent"] = 100.0 * (g["KernelTimeNs"] - mean) / mean if mean else 0.0
    return g[["Who", "KernelTimeNs", "Calls", "VsMeanPercent"]].reset_index(drop=True)


def rank_imbalance(db, **filters):
    """Bars of total kernel time per rank (or process), with the mean as a line."""
    plt = _plt()
    t = imbalance_table(db, **filters)
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * len(t) + 3), 4))
    if t.empty:
        ax.text(0.5, 0.5, "no kernel dispatches", ha="center", va="center")
        ax.set_axis_off()
        return fig
    ms = t["KernelTimeNs"] / 1e6
    ax.bar(range(len(t)), ms, color="#5a9e56")
    ax.axhline(ms.mean(), color="#c44e52", linestyle="--", label=f"mean {ms.mean():.3f} ms")
    ax.set_xticks(range(len(t)), t["Who"], rotation=45 if len(t) > 8 else 0, ha="right" if len(t) > 8 else "center")
    ax.set_ylabel("total kernel time (ms)")
    worst = t.loc[t["VsMeanPercent"].abs().idxmax()]
    ax.set_title(f"Kernel time per {t['Who'][0].split()[0]}\n(largest deviation: {worst['Who']}, "
                 f"{worst['VsMeanPercent']:+.1f}% vs mean)", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def png(fig, dpi: int = 100) -> bytes:
    """PNG bytes of a figure (Agg); no 'Software' text chunk, so nothing in the file points anywhere."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()
