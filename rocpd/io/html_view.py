"""HTML view for Jupyter (``_repr_html_``) of a connection: its inputs and dropped records. Built
from what is already at hand (parts, metadata, finished tables): showing an object never scans a
database."""

from __future__ import annotations

import html

_SHOWN_PATHS = 8


def connection_html(db) -> str:
    kind = "Dask connection" if hasattr(db, "run_tasks") else "connection"
    paths = list(db.paths)
    items = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in paths[:_SHOWN_PATHS])
    if len(paths) > _SHOWN_PATHS:
        items += f"<li>... and {len(paths) - _SHOWN_PATHS} more</li>"
    drops = db.dropped_records()
    lost = db.dropped_total()
    facts = [("databases", str(len(paths))), ("parts (processes)", str(len(db.parts))),
             ("dropped records", "not recorded" if not drops else
              ("none" if lost == 0 else f"<span style='color:#b00020'>{lost} LOST</span>"))]
    if db.skipped:
        facts.append(("skipped (unreadable)", html.escape(", ".join(p for p, _ in db.skipped))))
    rows = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td>"
                   "</tr>" for k, v in facts)
    return (f"<p><b>rocpd {kind}</b></p><table>{rows}</table><ul>{items}</ul>"
            "<p><small>db.kernel_stats(), rocpd.summary.stats.summarize(db), rocpd.ranks.analyze(db)"
            "</small></p>")
