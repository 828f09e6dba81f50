"""One self-contained HTML report: run facts, rocprofv3 summary tables, GPU busy, per-rank
imbalance and the plots of :mod:`rocpd.plots` inlined as base64 PNG data URIs. No script, no
stylesheet or font from anywhere else: the file opens offline and can be mailed as is."""

from __future__ import annotations

import base64
import datetime
import html

from . import plots, stats, summary

_CSS = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eef2f7; } td:first-child, th:first-child { text-align: left; }
.warn { color: #b00020; font-weight: bold; } img { max-width: 100%; border: 1px solid #ddd; }
.facts td { text-align: left; }
"""


def _table(df, units: str = "us") -> str:
    import pandas as pd

    shown = stats.scale(df, units) if "TotalDurationNs" in df.columns else df
    with pd.option_context("display.float_format", "{:.3f}".format):
        return shown.to_html(index=False, escape=True, border=0, na_rep="")


def _img(fig, alt: str) -> str:
    data = base64.b64encode(plots.png(fig)).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _facts(db) -> list[tuple[str, str]]:
    t0, t1 = db.run_bounds()
    procs = db.processes()
    hosts = sorted({str(h) for f in db.sources()
                    for (h,) in f.conn.execute("SELECT hostname FROM rocpd_info_node")})
    drops = db.dropped_records()
    lost = db.dropped_total()
    return [
        ("databases", ", ".join(db.paths)),
        ("processes", str(len(procs))),
        ("hosts", ", ".join(hosts) or "(unknown)"),
        ("recorded span", f"{(t1 - t0) / 1e6:.3f} ms"),
        ("dropped records", "not recorded" if not drops else ("none" if lost == 0 else f"{lost} LOST")),
    ]


def build(db, top: int = 20, units: str = "us", title: str = "rocpd report", **filters) -> str:
    """The report as an HTML string."""
    with summary.cached():  # tables and plots share the same partial aggregates
        return _build(db, top, units, title, **filters)


def _build(db, top: int, units: str, title: str, **filters) -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in _facts(db))
    if filters:
        rows += f"<tr><th>filters</th><td>{html.escape(repr(filters))}</td></tr>"
    parts.append(f"<table class='facts'>{rows}<tr><th>generated</th><td>{when}</td></tr></table>")
    if any(db.dropped_records().values()):
        parts.append("<p class='warn'>Some records were dropped while profiling: figures below "
                     "undercount.</p>")

    tables = stats.collect(db, **filters)
    busy = db.busy(**filters)
    parts.append("<h2>Top kernels</h2>")
    if "kernel" in tables:
        parts.append(_img(plots.top_kernels(db, top=min(top, 25), **filters), "top kernels"))
    else:
        parts.append("<p>No kernel dispatches recorded.</p>")
    parts.append("<h2>GPU timeline</h2>")
    if len(busy):
        parts.append(_img(plots.gpu_timeline(db, **filters), "GPU timeline per stream"))
    else:
        parts.append("<p>No GPU activity recorded.</p>")
    imb = plots.imbalance_table(db, **filters)
    if len(imb) > 1:
        parts.append("<h2>Per-rank imbalance</h2>")
        parts.append(_img(plots.rank_imbalance(db, **filters), "kernel time per rank"))
        parts.append(_table(imb.assign(KernelTimeMs=imb["KernelTimeNs"] / 1e6).drop(columns="KernelTimeNs")))
    if len(busy):
        parts.append("<h2>GPU busy</h2>")
        cols = ["pid", "agent_id", "agent_abs_index", "type", "GpuTime", "WallTime", "BusyPercent"]
        parts.append(_table(busy[cols]))
    parts.append(f"<h2>Summary tables</h2><p>Times in {html.escape(units)}; top {top} rows each; "
                 "StdDev is the sample standard deviation.</p>")
    if not tables:
        parts.append("<p>No timed records.</p>")
    for stem, df in tables.items():
        more = f" (top {top} of {len(df)})" if len(df) > top else ""
        parts.append(f"<h3>{html.escape(stem.upper())}_STATS{more}</h3>")
        parts.append(_table(df.head(top), units))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write(db, path: str, **options) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(build(db, **options))
    return path
