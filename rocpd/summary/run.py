"""The text of ``rocprof run -S``: a run's headline tables and its first findings in one screen.

One database: its summary (rocpd.summary.stats.format_summary, TOP_ROWS rows a table), then the top
findings (rocpd.analysis.top). Several (a forking or multi-rank run): one line per database
(what it holds, and the command that summarises it), then the summary of them all and the
findings. Every cut names the rocpd command that shows the rest (`rocpd summary --all ...`):
-S has no --all of its own.
"""

from __future__ import annotations

import os

from ..analysis.top import top_text
from ..io.connection import Connection
from ..textfmt import TOP_ROWS
from . import stats

FINDINGS = 3        # findings shown
SAMPLE_FUNCS = 5    # rows of the samples' functions-on-the-stack table (the lines come first)

_COUNTS = (("kernels", "SELECT COUNT(*) FROM rocpd_kernel_dispatch"),
           ("copies", "SELECT COUNT(*) FROM rocpd_memory_copy"),
           ("regions (ROCTx, API calls)", "SELECT COUNT(*) FROM rocpd_region"),
           ("call-stack samples", "SELECT COUNT(*) FROM rocpd_sample"))


def _counts(src) -> list[int]:
    return [int(src.conn.execute(sql).fetchone()[0]) for _, sql in _COUNTS]


def headline(path: str) -> str:
    """One line: what a database holds."""
    with Connection(path) as db:
        totals = [sum(x) for x in zip(*db.map(_counts), strict=True)]
        lost = db.dropped_total()
    said = [f"{n:,} {what}" for (what, _), n in zip(_COUNTS, totals, strict=True) if n]
    if lost:
        said.append(f"{lost:,} records dropped")
    return (", ".join(said) or "no records") + f" (rocpd summary {path})"


def target(databases: list[str]) -> str:
    """How a rocpd command names these databases: the one path, or their common folder."""
    if len(databases) == 1:
        return databases[0]
    folder = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in databases])
    return folder


def text(databases: list[str], units: str = "ns") -> str:
    where = target(databases)
    how = f"rocpd summary --all {where}"
    parts = []
    if len(databases) > 1:
        for path in databases:
            parts.append(f"== {path}")
            parts.append(headline(path))
        parts.append(f"== all {len(databases)} processes")
    parts.append(stats.format_summary(databases if len(databases) > 1 else databases[0],
                                      top=TOP_ROWS, units=units, how=how,
                                      sample_funcs=SAMPLE_FUNCS))
    parts.append(top_text(databases, FINDINGS, how=f"rocpd analyze {where}"))
    return "\n".join(parts)
