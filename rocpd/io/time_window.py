"""ROCm's time-window options: ``--start``/``--end`` (percent of the run like ``50%``, or an absolute
timestamp in ns), ``--start-marker``/``--end-marker`` (a ROCTx marker's message: the window starts
at that marker's start, ends at that marker's end) and ``--inclusive``.

``--inclusive`` means what ROCm's rocpd code does with it (time_window.get_time_filter), so that
record counts match ROCm's: True (the default) keeps only records lying wholly inside the window
(start >= S and end <= E); False keeps every record that overlaps it. ROCm's documentation (its
--help) describes the two the other way round; users compare numbers, so the code wins, and the
documented meaning is ``--inclusive False``. A window reaching past the run is clamped to it with
a warning on stderr; one that misses the run, or ends before it starts, is an error.

Used two ways: as filters (``rocpd.io.filters.Filter`` fields start, end, start_marker, end_marker,
inclusive) by summaries and exports, and by :func:`apply_time_window`, which re-defines a
connection's plain views so that any SQL (``rocpd query``) sees only the window.
"""

from __future__ import annotations

import math
import sys

from .. import _schema
from ..errors import RocpdError
from .readonly import lifted

TIMED = {"region": ("start", '"end"'), "kernel_dispatch": ("start", '"end"'),
         "memory_copy": ("start", '"end"'), "memory_allocate": ("start", '"end"'),
         "sample": ("timestamp", "timestamp")}


def run_bounds(db) -> tuple[int, int]:
    """(first start, last end) over kernels, copies, allocations, regions and samples of every
    file: what ROCm's get_min_max_time spans (its regions_and_samples holds the samples of its
    ``samples`` view, so a sampled metric on no thread does not widen the run)."""
    lo, hi = None, None
    for a, b in db.map(file_bounds, label="run bounds"):
        if a is not None:
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
    return (lo or 0, hi or 0)


def file_bounds(src) -> tuple[int | None, int | None]:
    lo, hi = None, None
    for t in ("kernel_dispatch", "memory_copy", "memory_allocate", "region"):
        a, b = src.conn.execute(f'SELECT MIN(start), MAX("end") FROM "rocpd_{t}"').fetchone()
        if a is not None:
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
    a, b = src.conn.execute("SELECT MIN(timestamp), MAX(timestamp) FROM samples").fetchone()
    if a is not None:
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    return lo, hi


class TimeWindowError(RocpdError):
    """A time window that cannot be applied (bad value, unknown or ambiguous marker)."""


def parse_time(value, t0: int, t1: int, label: str) -> int:
    """``value`` ('25%', '781470909013049', 12.5) as an absolute ns timestamp; None -> run bound."""
    if value is None or value == "":
        return t0 if label == "--start" else t1
    text = str(value).strip()
    try:
        if text.endswith("%"):
            pct = float(text[:-1])
            if not math.isfinite(pct):
                raise ValueError
            # As ROCm's percentages2timestamp rounds: the fraction first, then the span.
            return int(t0 + (t1 - t0) * (pct / 100.0))
        ns = float(text)
        if not math.isfinite(ns):
            raise ValueError
        return int(ns)
    except ValueError:
        raise TimeWindowError(f"{label} {value!r} is neither a percentage of the run (e.g. 50%) nor"
                              " a timestamp in ns (e.g. 781470909013049)") from None


def marker_time(db, name: str, which: str) -> int:
    """Start (``which='start'``) or end of the one ROCTx marker whose message is ``name``."""
    found = [t for times in db.map(file_marker_times, name, which) for t in times]
    opt = f"--{which}-marker"
    if not found:
        raise TimeWindowError(f"{opt}: no ROCTx marker named {name!r}; list them with"
                              " rocpd query --sql \"SELECT DISTINCT name FROM regions WHERE category"
                              " LIKE 'MARKER%'\"")
    if len(found) > 1:
        raise TimeWindowError(f"{opt}: {len(found)} ROCTx markers are named {name!r}; name a unique"
                              " one, or use --between A B (first A to the next B)")
    return int(found[0])


def file_marker_times(src, name: str, which: str) -> list[int]:
    col = "start" if which == "start" else '"end"'
    sql = (f"SELECT {col} FROM regions WHERE category LIKE 'MARKER%'"
           f" AND {_schema.roctx_message_sql()} = ?")
    return [r[0] for r in src.conn.execute(sql, (name,))]


def bounds(db, start=None, end=None, start_marker=None, end_marker=None) -> tuple[int, int]:
    """The absolute window [lo, hi] in ns, clamped to the run."""
    if start is not None and start_marker is not None:
        raise TimeWindowError("give --start or --start-marker, not both")
    if end is not None and end_marker is not None:
        raise TimeWindowError("give --end or --end-marker, not both")
    t0, t1 = run_bounds(db)
    if t0 == 0 and t1 == 0:
        raise TimeWindowError("cannot apply a time window: the databases hold no timed records")
    lo = marker_time(db, start_marker, "start") if start_marker is not None else \
        parse_time(start, t0, t1, "--start")
    hi = marker_time(db, end_marker, "end") if end_marker is not None else \
        parse_time(end, t0, t1, "--end")
    if hi < lo:
        raise TimeWindowError(f"the window ends ({hi} ns) before it starts ({lo} ns); give an end"
                              " after the start")
    if hi < t0 or lo > t1:
        raise TimeWindowError(f"the window [{lo}, {hi}] ns misses the run [{t0}, {t1}] ns; give"
                              " times inside it (or percentages)")
    if lo < t0 or hi > t1:
        print(f"rocpd: warning: window [{lo}, {hi}] ns reaches past the run; using"
              f" [{max(lo, t0)}, {min(hi, t1)}] ns", file=sys.stderr)
    return max(lo, t0), min(hi, t1)


def condition(lo: int, hi: int, inclusive: bool = True, start: str = "start",
              end: str = '"end"') -> tuple[str, list]:
    """SQL (and parameters) keeping a record of the window, by --inclusive as ROCm's code reads
    it: True, wholly inside; False, overlapping (see the module's doc)."""
    if inclusive:
        return f"({start} >= ? AND {end} <= ?)", [lo, hi]
    return f"({start} <= ? AND {end} >= ?)", [hi, lo]


def parse_inclusive(text) -> bool:
    """argparse type of --inclusive, as ROCm reads it: true/t/yes/1 (any case) is True."""
    return str(text).strip().lower() in ("true", "t", "yes", "1")


# Marks a view narrowed to a window (SQLite keeps the comment in the view's stored text).
NARROWED = "/* rocpd time window */"


def narrowed(conn) -> bool:
    """Whether ``conn``'s views were narrowed to a time window (:func:`apply_time_window`):
    what reads the real tables instead (the ranged summaries) must read the views then."""
    return conn.execute("SELECT 1 FROM sqlite_temp_master WHERE type = 'view' AND sql LIKE ?",
                        (f"%{NARROWED}%",)).fetchone() is not None


def apply_time_window(db, start=None, end=None, start_marker=None, end_marker=None,
                      inclusive: bool = True):
    """Re-define ``db``'s plain views (rocpd_region, rocpd_kernel_dispatch, ...) on every connection
    it reads through so they hold only the window; the human-readable views follow. Returns db."""
    if all(v is None for v in (start, end, start_marker, end_marker)):
        return db
    lo, hi = bounds(db, start, end, start_marker, end_marker)
    for conn, guard in db.view_connections():
        _narrow(conn, guard, lo, hi, inclusive)
    return db


def _narrow(conn, guard, lo: int, hi: int, inclusive: bool) -> None:
    with lifted(conn, guard):
        for table, (s, e) in TIMED.items():
            row = conn.execute("SELECT sql FROM sqlite_temp_master WHERE type = 'view' AND name = ?",
                               (f"rocpd_{table}",)).fetchone()
            if row is None:
                continue
            body = row[0].split(" AS ", 1)[1]
            cond, params = condition(lo, hi, inclusive, s, e)
            cond = cond.replace("?", "{}").format(*(int(p) for p in params))
            conn.execute(f'DROP VIEW temp."rocpd_{table}"')
            conn.execute(f'CREATE TEMP VIEW "rocpd_{table}" AS SELECT * FROM ({body}) WHERE {cond}'
                         f" {NARROWED}")
