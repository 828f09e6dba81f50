"""Per-name duration statistics with rocprofv3's columns.

Kernels are aggregated in numpy (:mod:`rocpd.fastagg`: SQLite's GROUP BY sorts every row); the
other, much smaller, tables inside SQLite. Each file is aggregated on its own connection (partial
count/sum/min/max/sum of squares per name) and the partials are combined in pandas: one table scan
per file, and any number of files summarised without attaching them together.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from concurrent.futures import ThreadPoolExecutor

from . import _schema
from .filters import Filter, name_mask, rank_of, resolve

COLUMNS = ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs", "MaxNs", "StdDev"]
_AGG = ('COUNT(*) AS n, SUM(d) AS s, MIN(d) AS mn, MAX(d) AS mx, TOTAL(CAST(d AS REAL) * d) AS ss')

# Inner queries: one row per timed record with (guid, pid, start, d, key...), filtered by `where`.
_SOURCES = {
    "kernel": (
        'SELECT K.guid, K.kernel_id AS k1, NULL AS k2, n, s, mn, mx, ss, K.pid, '
        'COALESCE(S.display_name, S.kernel_name) AS name, \'KERNEL_DISPATCH\' AS category FROM ('
        ' SELECT guid, kernel_id, pid, ' + _AGG + ' FROM (SELECT guid, kernel_id, pid, start,'
        ' "end" - start AS d FROM rocpd_kernel_dispatch) WHERE {where} GROUP BY guid, kernel_id{bypid}) K'
        ' LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid'),
    "memory_copy": (
        'SELECT M.guid, M.name_id AS k1, NULL AS k2, n, s, mn, mx, ss, M.pid, S.string AS name,'
        ' \'MEMORY_COPY\' AS category FROM ('
        ' SELECT guid, name_id, pid, ' + _AGG + ' FROM (SELECT guid, name_id, pid, start,'
        ' "end" - start AS d FROM rocpd_memory_copy) WHERE {where} GROUP BY guid, name_id{bypid}) M'
        ' LEFT JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid'),
    "memory_allocation": (
        'SELECT guid, type AS k1, level AS k2, ' + _AGG + ', pid,'
        ' \'MEMORY_ALLOCATION_\' || COALESCE(type, \'UNKNOWN\') AS name, \'MEMORY_ALLOCATION\' AS category'
        ' FROM (SELECT guid, type, level, pid, start, "end" - start AS d FROM rocpd_memory_allocate)'
        ' WHERE {where} GROUP BY guid, type{bypid}'),
    # ROCTx ranges are named by their message; other regions (API calls) by their function name.
    "region": (
        'SELECT guid, NULL AS k1, NULL AS k2, ' + _AGG + ', pid, name, category FROM ('
        ' SELECT R.guid, R.pid, R.start, R."end" - R.start AS d, C.string AS category,'
        ' ' + _schema.region_name_sql("C.string", "E.extdata", "S.string") + ' AS name'
        ' FROM rocpd_region R'
        ' LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid'
        ' LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid'
        ' LEFT JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid)'
        ' WHERE {where} {category} GROUP BY guid, category, name{bypid}'),
}


_memo: contextvars.ContextVar[dict | None] = contextvars.ContextVar("rocpd_partials", default=None)


@contextlib.contextmanager
def cached():
    """Within the block, identical partial queries are answered once (a summary asks for the kernel
    partials for its kernel table and again for the domain table). Scoped, not kept on the
    connection: a database still being written must be read afresh by the next call."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def partials(db, kind: str, flt: Filter, by_pid: bool = False, categories=None):
    """Raw partial aggregates from every file, as one DataFrame."""
    memo = _memo.get()
    if memo is None:
        return _partials(db, kind, flt, by_pid, categories)
    key = (id(db), kind, repr(flt), by_pid, None if categories is None else tuple(categories))
    if key not in memo:
        memo[key] = _partials(db, kind, flt, by_pid, categories)
    return memo[key].copy()


def _partials(db, kind: str, flt: Filter, by_pid: bool, categories):
    import pandas as pd

    where, params = resolve(db, flt)
    cat_sql = ""
    if categories is not None:
        cats = list(categories)
        cat_sql = f"AND category IN ({','.join('?' * len(cats)) or 'NULL'})"
        params = params + cats
    if kind == "kernel":
        from .fastagg import kernel_partials

        df = kernel_partials(db, where, params, by_pid)
        if df is not None:
            df = df[name_mask(df["name"], flt)] if (flt.include or flt.exclude) else df
            df["name"] = df["name"].fillna("(unknown)")
            return df
    sql = _SOURCES[kind].format(where=where, bypid=", pid" if by_pid else "", category=cat_sql)
    files = db.sources()

    def run(f):
        cur = f.conn.execute(sql, params)
        return cur.fetchall(), [d[0] for d in cur.description]

    workers = min(len(files), 4)
    if workers > 1:
        with ThreadPoolExecutor(workers) as ex:  # sqlite3 releases the GIL while scanning
            results = list(ex.map(run, files))
    else:
        results = [run(f) for f in files]
    cols = results[0][1]
    rows = [r for res, _ in results for r in res]
    df = pd.DataFrame.from_records(rows, columns=cols)
    if kind == "kernel":
        df = df[name_mask(df["name"], flt)] if (flt.include or flt.exclude) else df
    df["name"] = df["name"].fillna("(unknown)")
    return df


def finish(df, keys=("name",)):
    """Combine partials into rocprofv3's summary table, sorted by total time."""
    import pandas as pd

    if df.empty:
        return pd.DataFrame(columns=[*[k for k in keys if k != "name"], *COLUMNS])
    g = df.groupby(list(keys), dropna=False, sort=False).agg(
        n=("n", "sum"), s=("s", "sum"), mn=("mn", "min"), mx=("mx", "max"), ss=("ss", "sum"))
    g = g.reset_index()
    n, s, ss = g["n"].astype("float64"), g["s"].astype("float64"), g["ss"].astype("float64")
    var = ((ss - s * s / n) / (n - 1)).where(n > 1, 0.0).clip(lower=0.0)
    out = pd.DataFrame({k: g[k] for k in keys if k != "name"})
    out["Name"] = g["name"].astype(str)
    out["Calls"] = g["n"].astype("int64")
    out["TotalDurationNs"] = g["s"].astype("int64")
    out["AverageNs"] = s / n
    group = [k for k in keys if k != "name"]
    tot = out.groupby(group, dropna=False)["TotalDurationNs"].transform("sum") if group else out["TotalDurationNs"].sum()
    out["Percentage"] = 100.0 * out["TotalDurationNs"] / tot
    out["Percentage"] = out["Percentage"].fillna(0.0)
    out["MinNs"] = g["mn"].astype("int64")
    out["MaxNs"] = g["mx"].astype("int64")
    out["StdDev"] = var.map(math.sqrt)
    out = out.sort_values([*group, "TotalDurationNs"], ascending=[True] * len(group) + [False])
    return out.reset_index(drop=True)


def stats(db, kind: str, by: str | None = None, categories=None, **filters):
    """Summary table for one kind ('kernel', 'memory_copy', 'memory_allocation', 'region').

    ``by``: None, 'pid', 'rank', 'host' (one table per group, group column first). ``categories``
    limits regions to those categories. Filters: see :class:`rocpd.filters.Filter`.
    """
    flt = Filter.of(filters)
    df = partials(db, kind, flt, by_pid=(by == "pid"), categories=categories)
    keys = ["name"]
    if kind == "region":
        keys = ["category", "name"]
    if by == "pid":
        keys = ["pid", *keys]
    elif by == "rank":
        df["rank"] = df["guid"].map(rank_of(db))
        keys = ["rank", *keys]
    elif by == "host":
        df["host"] = df["guid"].map(_hosts(db))
        keys = ["host", *keys]
    elif by is not None:
        raise ValueError(f"by must be None, 'pid', 'rank' or 'host', not {by!r}")
    return finish(df, tuple(keys))


def _hosts(db) -> dict[str, str]:
    out = {}
    for f in db.sources():
        for guid, host in f.conn.execute("SELECT guid, hostname FROM rocpd_info_node"):
            out[guid] = host
    return out


def domain_stats(db, **filters):
    """One row per category (domain): all records of the domain together."""
    import pandas as pd

    flt = Filter.of(filters)
    frames = []
    for kind in ("kernel", "memory_copy", "memory_allocation", "region"):
        df = partials(db, kind, flt)
        if not df.empty:
            frames.append(df.assign(name=df["category"].fillna("(unknown)")))
    if not frames:
        return finish(pd.DataFrame())
    return finish(pd.concat(frames, ignore_index=True))


def region_categories(db) -> list[str]:
    cats = set()
    for f in db.sources():
        cats.update(r[0] for r in f.conn.execute(
            "SELECT DISTINCT C.string FROM rocpd_event E JOIN rocpd_string C"
            " ON C.id = E.category_id AND C.guid = E.guid"
            " WHERE E.id IN (SELECT event_id FROM rocpd_region)"))
    return sorted(c for c in cats if c)


def finish_percent(df, by: str | None = None):
    """Recompute Percentage within a subset of a finished table (e.g. one API domain)."""
    df = df.copy()
    if by:
        tot = df.groupby(by, dropna=False)["TotalDurationNs"].transform("sum")
    else:
        tot = df["TotalDurationNs"].sum()
    df["Percentage"] = (100.0 * df["TotalDurationNs"] / tot).fillna(0.0)
    return df.reset_index(drop=True)
