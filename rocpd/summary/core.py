"""Per-name duration statistics with rocprofv3's columns.

Kernels are aggregated in numpy (:mod:`rocpd.summary.fastagg`: SQLite's GROUP BY sorts every row); the
other, much smaller, tables inside SQLite. Each file is aggregated on its own connection (partial
count/sum/min/max/sum of squares per name) and the partials are combined in pandas: one table scan
per file, and any number of files summarised without attaching them together. The per-file work
goes through ``db.map`` so that a Dask connection (:mod:`rocpd.cluster`) runs it on its workers.

Every partial is an exact integer, the sum of squares included (a Python int, summed from three
int64 parts): so the totals and the standard deviation do not depend on how the rows were split
into files, rowid ranges or tasks, nor on the order the partials are combined in; the Dask path
gives the local path's numbers to the last bit. The variance is computed from integers too
(n*ss - s*s), which also avoids float cancellation when durations hardly vary.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import sqlite3

import pandas as pd

from .. import _schema
from ..io.filters import Filter, name_mask, rank_of, resolve
from . import fastagg

COLUMNS = ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs", "MaxNs", "StdDev"]
# d*d summed exactly in int64 from d = h*2^16 + l: d^2 = h^2<<32 + (h*l)<<17 + l^2. Each part
# overflows only past ~39 hours of total time of one name in one file (SQLite then raises, and the
# float form below answers for that file).
_AGG = ('COUNT(*) AS n, SUM(d) AS s, MIN(d) AS mn, MAX(d) AS mx, SUM((d >> 16) * (d >> 16)) AS hh,'
        ' SUM((d >> 16) * (d & 65535)) AS hl, SUM((d & 65535) * (d & 65535)) AS ll')
_AGG_FLOAT = ('COUNT(*) AS n, SUM(d) AS s, MIN(d) AS mn, MAX(d) AS mx,'
              ' TOTAL(CAST(d AS REAL) * d) AS hh, 0 AS hl, 0 AS ll')

# Inner queries: one row per timed record with (guid, pid, start, d, key...), filtered by `where`.
_SOURCES = {
    "kernel": (
        'SELECT K.guid, K.kernel_id AS k1, NULL AS k2, n, s, mn, mx, hh, hl, ll, K.pid, '
        'COALESCE(S.display_name, S.kernel_name) AS name, \'KERNEL_DISPATCH\' AS category FROM ('
        ' SELECT guid, kernel_id, pid, ' + _AGG + ' FROM (SELECT guid, kernel_id, pid, start,'
        ' "end" - start AS d FROM rocpd_kernel_dispatch) WHERE {where} GROUP BY guid, kernel_id{bypid}) K'
        ' LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid'),
    "memory_copy": (
        'SELECT M.guid, M.name_id AS k1, NULL AS k2, n, s, mn, mx, hh, hl, ll, M.pid, S.string AS name,'
        ' \'MEMORY_COPY\' AS category FROM ('
        ' SELECT guid, name_id, pid, ' + _AGG + ' FROM (SELECT guid, name_id, pid, start,'
        ' "end" - start AS d FROM rocpd_memory_copy) WHERE {where} GROUP BY guid, name_id{bypid}) M'
        ' LEFT JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid'),
    "memory_allocation": (
        'SELECT guid, type AS k1, level AS k2, ' + _AGG + ', pid,'
        ' \'MEMORY_ALLOCATION_\' || COALESCE(type, \'UNKNOWN\') AS name, \'MEMORY_ALLOCATION\' AS category'
        ' FROM (SELECT guid, type, level, pid, start, "end" - start AS d FROM rocpd_memory_allocate)'
        ' WHERE {where} GROUP BY guid, type{bypid}'),
    # Scratch-memory operations (AMD): also rows of rocpd_memory_allocate, at level 'SCRATCH'.
    "scratch_memory": (
        'SELECT guid, type AS k1, level AS k2, ' + _AGG + ', pid,'
        ' \'SCRATCH_MEMORY_\' || COALESCE(type, \'UNKNOWN\') AS name, \'SCRATCH_MEMORY\' AS category'
        ' FROM (SELECT guid, type, level, pid, start, "end", "end" - start AS d'
        ' FROM rocpd_memory_allocate WHERE level = \'SCRATCH\')'
        ' WHERE {where} GROUP BY guid, type{bypid}'),
    # ROCTx ranges are named by their message; other regions (API calls) by their function name.
    # Instants (rocpd_sample rows, duration 0) join them: see _INSTANTS.
    "region": (
        'SELECT guid, NULL AS k1, NULL AS k2, ' + _AGG + ', pid, name, category FROM ('
        ' SELECT R.guid, R.pid, R.start, R."end", R."end" - R.start AS d, C.string AS category,'
        ' ' + _schema.region_name_sql("C.string", "E.extdata", "S.string") + ' AS name'
        ' FROM rocpd_region R'
        ' LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid'
        ' LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid'
        ' LEFT JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid{instants})'
        ' WHERE {where} {category} GROUP BY guid, category, name{bypid}'),
    # The domain table's region rows: one per category, without reading the regions' names
    # (the instants, as in "region").
    "region_category": (
        'SELECT guid, NULL AS k1, NULL AS k2, ' + _AGG + ', pid, category AS name, category FROM ('
        ' SELECT R.guid, R.pid, R.start, R."end", R."end" - R.start AS d, C.string AS category,'
        ' NULL AS name FROM rocpd_region R'
        ' LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid'
        ' LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid{instants})'
        ' WHERE {where} {category} GROUP BY guid, category{bypid}'),
}
# Instants counted with the regions: "markers", ROCTx marks (rocprofv3's marker stats count
# roctxMarkA with duration 0); "all", every sample ROCm's ``samples`` view shows (its summary reads
# regions_and_samples: a sample's track must name a known process and thread), named by its track.
_INSTANTS = {
    # The track test first: both writers keep a thread's marks on a track named by their
    # category, so call-stack samples (often most rows) are passed over without joins.
    "markers": ("", "WHERE {track} IN (SELECT T.id FROM rocpd_track T JOIN rocpd_string TS"
                    " ON TS.id = T.name_id AND TS.guid = T.guid WHERE TS.string LIKE 'MARKER%')"
                    " AND C.string LIKE 'MARKER%'"),
    "all": (" JOIN rocpd_info_process P ON P.id = TR.pid AND P.guid = TR.guid"
            " JOIN rocpd_info_thread TH ON TH.id = TR.tid AND TH.guid = TR.guid", ""),
}
_INSTANT_SQL = (
    ' UNION ALL SELECT SA.guid, TR.pid, SA.timestamp, SA.timestamp, 0, C.string,'
    ' ' + _schema.region_name_sql("C.string", "E.extdata", "N.string") + ' FROM rocpd_sample SA'
    ' JOIN rocpd_track TR ON TR.id = SA.track_id AND TR.guid = SA.guid'
    ' JOIN rocpd_event E ON E.id = SA.event_id AND E.guid = SA.guid'
    ' JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid'
    ' LEFT JOIN rocpd_string N ON N.id = TR.name_id AND N.guid = TR.guid{join} {where}')


def source_sql(kind: str, where: str, by_pid: bool = False, category: str = "",
               instants: str = "markers") -> str:
    """The partial-aggregate query of ``kind`` (one of _SOURCES) over ``where``; ``category``: an
    extra "AND category ..." condition; ``instants``: which samples join the regions."""
    join, iwhere = _INSTANTS[instants]
    return _SOURCES[kind].format(where=where, bypid=", pid" if by_pid else "", category=category,
                                 instants=_INSTANT_SQL.format(
                                     join=join, where=iwhere.format(track="SA.track_id")))


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


def partials(db, kind: str, flt: Filter, by_pid: bool = False, categories=None,
             instants: str = "markers"):
    """Raw partial aggregates from every file, as one DataFrame. ``instants``: which samples
    count as zero-length regions (see _INSTANTS)."""
    memo = _memo.get()
    if memo is None:
        return _partials(db, kind, flt, by_pid, categories, instants)
    key = (id(db), kind, repr(flt), by_pid, None if categories is None else tuple(categories),
           instants)
    if key not in memo:
        memo[key] = _partials(db, kind, flt, by_pid, categories, instants)
    return memo[key].copy()


def _partials(db, kind: str, flt: Filter, by_pid: bool, categories, instants: str):
    where, params = resolve(db, flt)
    cat_sql = ""
    if categories is not None:
        cats = list(categories)
        cat_sql = f"AND category IN ({','.join('?' * len(cats)) or 'NULL'})"
        params = params + cats
    if kind == "kernel":
        df = fastagg.kernel_partials(db, where, params, by_pid)
        if df is not None:
            df = df[name_mask(df["name"], flt)] if (flt.include or flt.exclude) else df
            df["name"] = df["name"].fillna("(unknown)")
            return df
    sql = source_sql(kind, where, by_pid, cat_sql, instants)
    results = db.map(file_partials, sql, params, label=f"{kind} summary", parallel=True)
    cols = results[0][1]
    rows = [r for res, _ in results for r in res]
    df = pd.DataFrame.from_records(rows, columns=cols)
    df["ss"] = df["ss"].astype(object)
    if kind == "kernel":
        df = df[name_mask(df["name"], flt)] if (flt.include or flt.exclude) else df
    df["name"] = df["name"].fillna("(unknown)")
    return df


def sum_of_squares(hh, hl, ll):
    """d*d summed, from the three parts of _AGG (a Python int), or the float form's total."""
    if isinstance(hh, float):
        return hh
    return ((hh or 0) << 32) + ((hl or 0) << 17) + (ll or 0)


def file_partials(src, sql: str, params: list):
    """One file's partial rows for ``sql`` (one of _SOURCES, formatted): (rows, columns) with the
    three sum-of-squares parts folded into one exact ``ss``. Runs wherever ``db.map`` runs it."""
    try:
        cur = src.conn.execute(sql, params)
        rows = cur.fetchall()
    except sqlite3.OperationalError as e:
        if "integer overflow" not in str(e):
            raise
        cur = src.conn.execute(sql.replace(_AGG, _AGG_FLOAT), params)
        rows = cur.fetchall()
    cols = [d[0] for d in cur.description]
    a, b, c = cols.index("hh"), cols.index("hl"), cols.index("ll")
    keep = [i for i in range(len(cols)) if i not in (b, c)]
    out = []
    for r in rows:
        r = list(r)
        r[a] = sum_of_squares(r[a], r[b], r[c])
        out.append([r[i] for i in keep])
    cols = ["ss" if i == a else cols[i] for i in keep]
    return out, cols


def std_dev(n, s, ss) -> float:
    """Sample standard deviation from count, sum and sum of squares; exact up to the final
    rounding when ``s`` and ``ss`` are integers."""
    if n < 2 or s is None or s != s:  # NaN: no durations
        return 0.0
    n, s = int(n), int(s)
    if n < 2:
        return 0.0
    if isinstance(ss, int):
        var = (n * ss - s * s) / (n * (n - 1))  # int / int: correctly rounded
    else:
        var = (float(ss) - float(s) * s / n) / (n - 1)
    return math.sqrt(max(var, 0.0))


def finish(df, keys=("name",)):
    """Combine partials into rocprofv3's summary table, sorted by total time."""
    if df.empty:
        return pd.DataFrame(columns=[*[k for k in keys if k != "name"], *COLUMNS])
    df = df.assign(ss=df["ss"].astype(object))  # exact Python ints (see the module's doc)
    g = df.groupby(list(keys), dropna=False, sort=False).agg(
        n=("n", "sum"), s=("s", "sum"), mn=("mn", "min"), mx=("mx", "max"), ss=("ss", "sum"))
    g = g.reset_index()
    n, s = g["n"].astype("float64"), g["s"].astype("float64")
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
    out["StdDev"] = [std_dev(a, b, c) for a, b, c in
                     zip(g["n"].tolist(), g["s"].tolist(), g["ss"].tolist(), strict=True)]
    out = out.sort_values([*group, "TotalDurationNs", "Name"],
                          ascending=[True] * len(group) + [False, True], kind="stable")
    return out.reset_index(drop=True)


def stats(db, kind: str, by: str | None = None, categories=None, **filters):
    """Summary table for one kind ('kernel', 'memory_copy', 'memory_allocation', 'region').

    ``by``: None, 'pid', 'rank', 'host' (one table per group, group column first). ``categories``
    limits regions to those categories. Filters: see :class:`rocpd.io.filters.Filter`.
    """
    flt = Filter.of(filters)
    df = partials(db, kind, flt, by_pid=(by == "pid"), categories=categories)
    keys = ["name"]
    if kind == "region":
        keys = ["category", "name"]
    if by == "pid":
        keys = ["pid", *keys]
    elif by == "rank":
        # Integer ranks, with a gap (not NaN-as-float) for a database without one (a launcher).
        df["rank"] = df["guid"].map(rank_of(db)).astype("Int64")
        keys = ["rank", *keys]
    elif by == "host":
        df["host"] = df["guid"].map(_hosts(db))
        keys = ["host", *keys]
    elif by is not None:
        raise ValueError(f"by must be None, 'pid', 'rank' or 'host', not {by!r}")
    return finish(df, tuple(keys))


def _hosts(db) -> dict[str, str]:
    return {guid: host for rows in db.map(file_hosts) for guid, host in rows}


def file_hosts(src) -> list:
    return src.conn.execute("SELECT guid, hostname FROM rocpd_info_node").fetchall()


def domain_stats(db, **filters):
    """One row per category (domain): all records of the domain together."""
    flt = Filter.of(filters)
    frames = []
    for kind in ("kernel", "memory_copy", "memory_allocation", "scratch_memory", "region_category"):
        df = partials(db, kind, flt)
        if not df.empty:
            frames.append(df.assign(name=df["category"].fillna("(unknown)")))
    if not frames:
        return finish(pd.DataFrame())
    return finish(pd.concat(frames, ignore_index=True))


def region_categories(db, instants: str = "markers") -> list[str]:
    """Categories of the regions and of the instants counted with them (see _INSTANTS)."""
    cats = {c for found in db.map(file_region_categories, instants) for c in found}
    return sorted(c for c in cats if c)


def file_region_categories(src, instants: str = "markers") -> list[str]:
    join, where = _INSTANTS[instants]
    # A track holds one category's samples (both writers key tracks by thread and category):
    # one sample per track tells its category without reading them all.
    sql = ("SELECT DISTINCT C.string FROM rocpd_event E JOIN rocpd_string C"
           " ON C.id = E.category_id AND C.guid = E.guid"
           " WHERE E.id IN (SELECT event_id FROM rocpd_region) UNION SELECT DISTINCT C.string"
           f" FROM rocpd_track TR{join} JOIN rocpd_event E ON E.guid = TR.guid AND E.id ="
           " (SELECT SA.event_id FROM rocpd_sample SA WHERE SA.track_id = TR.id"
           " AND SA.guid = TR.guid LIMIT 1)"
           f" JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid"
           f" {where.format(track='TR.id')}")
    return [r[0] for r in src.conn.execute(sql)]


def finish_percent(df, by: str | None = None):
    """Recompute Percentage within a subset of a finished table (e.g. one API domain)."""
    df = df.copy()
    if by:
        tot = df.groupby(by, dropna=False)["TotalDurationNs"].transform("sum")
    else:
        tot = df["TotalDurationNs"].sum()
    df["Percentage"] = (100.0 * df["TotalDurationNs"] / tot).fillna(0.0)
    return df.reset_index(drop=True)
