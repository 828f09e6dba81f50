"""pandas DataFrames for notebooks; bound as methods of :class:`rocpd.io.connection.Connection`.

Every method takes the shared filters (see :mod:`rocpd.io.filters`): ``window``, ``pct``, ``between``,
``include``/``exclude`` (kernel-name regexes), ``pid``, ``rank``.
"""

from __future__ import annotations

import pandas as pd

from .. import _schema
from ..io.filters import Filter, name_mask, resolve
from ..io.filters import rank_of as _rank_of
from ..io.time_window import run_bounds as _run_bounds
from . import chunked
from . import core as _summary
from .busy import file_busy

_INT_COLS = ("start", "end", "duration", "timestamp", "pid", "tid", "size")


def _frame(db, view: str, flt: Filter, extra: str = "", params=(), order: str = "start"):
    where, wparams = resolve(db, flt)
    source = view if view.startswith("(") else f'"{view}"'
    sql = f"SELECT * FROM {source} WHERE {where} {extra}"
    if order:
        sql += f' ORDER BY "{order}"'
    frames = db.map(file_frame, sql, [*wparams, *params], label="regions" if view.startswith("(") else view)
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(frames) > 1 and order in df.columns:
        df = df.sort_values(order, kind="stable", ignore_index=True)
    return _dtypes(df)


def _dtypes(df):
    """Integer columns as int64 (Int64 where a value is missing), names as pandas strings."""
    for c in df.columns:
        if c in _INT_COLS or c.endswith("_id") or c in ("id", "nid"):
            if df[c].notna().all():
                df[c] = df[c].astype("int64")
            else:
                df[c] = df[c].astype("Int64")
        elif df[c].dtype == object and c in ("name", "category", "region", "queue", "stream", "guid"):
            df[c] = df[c].astype("string")
    return df


def kernels(self, chunksize: int | None = None, **filters):
    """One row per kernel dispatch (the ``kernels`` view), sorted by start. ``chunksize``: an
    iterator of DataFrames of at most that many rows instead, in the same order, in memory
    bounded by the chunk (rocpd.summary.chunked)."""
    flt = Filter.of(filters)
    if chunksize is not None:
        return chunked.frames(self, "kernels", flt, chunksize, _dtypes, names=True)
    df = _frame(self, "kernels", flt)
    return df[name_mask(df["name"], flt)].reset_index(drop=True) if (flt.include or flt.exclude) else df


# The regions view as ROCm's names a ROCTx range by its API function; the DataFrame shows its
# message, what a reader looks for (rocpd._schema.region_name_sql).
_REGIONS = ("(SELECT id, guid, category, " + _schema.region_name_sql() + " AS name, nid, pid, tid,"
            ' start, "end", duration, event_id, stack_id, parent_stack_id, corr_id, extdata,'
            " call_stack, line_info FROM regions)")


def regions(self, category: str | list[str] | None = None, **filters):
    """CPU regions (API calls, ROCTx ranges): the ``regions`` view, optionally of some categories;
    a ROCTx range named by its message."""
    flt = Filter.of(filters)
    if category is None:
        return _frame(self, _REGIONS, flt)
    cats = [category] if isinstance(category, str) else list(category)
    return _frame(self, _REGIONS, flt, f"AND category IN ({','.join('?' * len(cats))})", cats)


def memory_copies(self, **filters):
    return _frame(self, "memory_copies", Filter.of(filters))


def memory_allocations(self, **filters):
    return _frame(self, "memory_allocations", Filter.of(filters))


def samples(self, **filters):
    """Point-in-time records on a thread (call-stack samples, ROCTx marks): the rows of ROCm's
    ``samples`` view. Sampled counters over time are ``db.metric_samples()``. Time filters apply
    to timestamp."""
    flt = Filter.of(filters)

    where, params = resolve(self, flt)
    where = where.replace('"end"', "timestamp").replace("start", "timestamp")
    frames = self.map(file_frame, f'SELECT * FROM samples WHERE {where} ORDER BY timestamp', params,
                      label="samples")
    return pd.concat(frames, ignore_index=True).sort_values("timestamp", ignore_index=True)


def file_frame(src, sql, params):
    """One file's rows of ``sql`` as a DataFrame (run by ``db.map``, locally or on a worker)."""
    cur = src.conn.execute(sql, params)
    return pd.DataFrame.from_records(cur.fetchall(), columns=[d[0] for d in cur.description])


def kernel_stats(self, by: str | None = None, **filters):
    """rocprofv3 kernel_stats: Name, Calls, TotalDurationNs, AverageNs, Percentage, MinNs, MaxNs,
    StdDev (sample std-dev), sorted by total time; ``by`` = 'pid' | 'rank' | 'host'."""
    return _summary.stats(self, "kernel", by=by, **filters)


def region_stats(self, category: str | list[str] | None = None, by: str | None = None, **filters):
    cats = None if category is None else ([category] if isinstance(category, str) else category)
    return _summary.stats(self, "region", by=by, categories=cats, **filters)


def memory_copy_stats(self, by: str | None = None, **filters):
    return _summary.stats(self, "memory_copy", by=by, **filters)


def busy(self, **filters):
    """GPU busy per agent: GpuTime (sum of kernel and copy durations), WallTime (first to last GPU
    activity over all files), Busy (GpuTime/WallTime, as ROCm's busy view) and BusyPercent."""
    where, params = resolve(self, Filter.of(filters))
    rows = [r for found in self.map(file_busy, where, params, label="busy") for r in found]
    df = pd.DataFrame(rows, columns=["guid", "pid", "agent_id", "agent_abs_index", "type", "GpuTime",
                                     "lo", "hi"])
    if df.empty:
        return df.drop(columns=["lo", "hi"]).assign(WallTime=[], Busy=[], BusyPercent=[])
    wall = int(df["hi"].max() - df["lo"].min())
    df = df.drop(columns=["lo", "hi"])
    df["WallTime"] = wall
    df["Busy"] = df["GpuTime"] / wall if wall else 0.0
    df["BusyPercent"] = 100.0 * df["Busy"]
    return df


def agents(self):
    return _sql_frame_all(self, "SELECT * FROM rocpd_info_agent")


def processes(self):
    return _sql_frame_all(self, "SELECT * FROM processes")


def threads(self):
    return _sql_frame_all(self, "SELECT * FROM threads")


def _sql_frame_all(db, sql):
    return pd.concat(db.map(file_frame, sql, ()), ignore_index=True)


def run_bounds(self):
    return _run_bounds(self)


def rank_of(self):
    return _rank_of(self)
