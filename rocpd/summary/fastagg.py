"""Kernel-summary partials aggregated in numpy instead of SQLite's GROUP BY.

SQLite has no index on kernel_id to group from, so ``GROUP BY kernel_id`` sorts every row through a
temp b-tree (B6: 27 s for 10M rows). Here each rowid range of each part is read by one aggregate
query that only streams the needed integer columns out as two comma-separated texts
(``group_concat``: one result row, no per-row Python objects), numpy parses them and aggregates per
kernel id (bincount / ufunc.at), and the ids are named afterwards. Ranges of one file and different
files run in a process pool, one read-only connection per task.

``kernel_partials`` returns the same frame as the SQL path in :mod:`rocpd.summary` (guid, k1, k2, n,
s, mn, mx, ss, pid, name, category), or None when a part cannot be read this way (a writer whose
kernel table lacks a column, NULL ids or times); the caller then uses the SQL path.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..io.files import open_ro
from ..io.time_window import narrowed
from ..progress import iterate

_NEEDED = {"id", "guid", "pid", "kernel_id", "start", "end"}
_MIN_PARALLEL_ROWS = 1_000_000  # below this, one range in this thread is as quick
_CHUNK_MIN, _CHUNK_MAX = 1 << 18, 1 << 21


class _Unreadable(Exception):
    pass


def _parse(text, n: int):
    if n == 0:
        return np.zeros(0, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            arr = np.fromstring(text or "", dtype=np.int64, sep=",")
        except ValueError:
            raise _Unreadable() from None
    if len(arr) != n:  # a NULL was skipped by group_concat, or a value was not an integer
        raise _Unreadable()
    return arr


def _codes(x):
    """(unique values, code per element) for an int64 array; dense ids skip the sort."""
    lo, hi = int(x.min()), int(x.max())
    if hi - lo <= 4 * len(x) + 4096:
        return np.arange(lo, hi + 1, dtype=np.int64), x - lo
    uniq, inv = np.unique(x, return_inverse=True)
    return uniq, inv.reshape(-1)


def _sum_at(m: int, codes, values):
    out = np.zeros(m, np.int64)
    np.add.at(out, codes, values)
    return out


def _exact_squares(m: int, codes, d) -> list[int]:
    """Per code, the exact sum of d*d as Python ints (see rocpd.summary: d = h*2^16 + l, each
    part summed in int64). Where a part could overflow int64 (|d| >= 2^37 ns, 137 s, in a range
    of 2M rows) that part is summed in Python ints instead."""
    h, lo = d >> 16, d & 0xFFFF
    hmax = int(np.abs(h).max()) if len(h) else 0
    ll = _sum_at(m, codes, lo * lo)
    if hmax * hmax * len(d) < (1 << 62):
        hh, hl = _sum_at(m, codes, h * h), _sum_at(m, codes, h * lo)
        return [(a << 32) + (b << 17) + c for a, b, c in zip(hh.tolist(), hl.tolist(), ll.tolist(),
                                                              strict=True)]
    hh, hl = [0] * m, [0] * m
    for c, hv, lv in zip(codes.tolist(), h.tolist(), lo.tolist(), strict=True):
        hh[c] += hv * hv
        hl[c] += hv * lv
    return [(a << 32) + (b << 17) + c for a, b, c in zip(hh, hl, ll.tolist(), strict=True)]


def aggregate(keys: list, d):
    """Per distinct key tuple: (key columns, count, sum, min, max, exact sum of squares as a list
    of Python ints)."""
    uniq, codes = _codes(keys[0])
    cols = [uniq]
    for k in keys[1:]:
        u2, c2 = _codes(k)
        combined = codes * len(u2) + c2
        cu, codes = _codes(combined)
        cols = [c[cu // len(u2)] for c in cols] + [u2[cu % len(u2)]]
    m = len(cols[0])
    n = np.bincount(codes, minlength=m)
    s = _sum_at(m, codes, d)
    mn = np.full(m, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(mn, codes, d)
    mx = np.full(m, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(mx, codes, d)
    ss = _exact_squares(m, codes, d)
    keep = n > 0
    ss = [v for v, k in zip(ss, keep.tolist(), strict=True) if k]
    return [c[keep] for c in cols], n[keep], s[keep], mn[keep], mx[keep], ss


def run_task(task):
    """One rowid range of one part: read in a fresh read-only connection, aggregate, return rows."""
    path, table, lo, hi, where, params, by_pid = task
    extra = ", group_concat(pid, ',')" if by_pid else ""
    sql = (f"SELECT count(*), group_concat(kernel_id, ','), group_concat(\"end\" - start, ','){extra}"
           f" FROM {table} WHERE id >= ? AND id < ? AND ({where})")
    conn = open_ro(path)
    try:
        row = conn.execute(sql, [lo, hi, *params]).fetchone()
    finally:
        conn.close()
    n = row[0]
    if not n:
        return []
    try:
        arrays = [_parse(t, n) for t in row[1:]]
    except _Unreadable:
        return None
    k, d = arrays[0], arrays[1]
    keys = [k, arrays[2]] if by_pid else [k]
    cols, cnt, s, mn, mx, ss = aggregate(keys, d)
    pids = cols[1].tolist() if by_pid else [None] * len(cnt)
    return list(zip(cols[0].tolist(), pids, cnt.tolist(), s.tolist(), mn.tolist(), mx.tolist(),
                    ss, strict=True))


def _pool(workers: int):
    """Threads, not processes: each range's query runs in SQLite without the GIL, and the
    parsing and numpy aggregation after it mostly so (measured at 10M kernels on two cores:
    2.2-2.3 s against 2.5-3.4 s with forked processes). A process pool could only fork safely
    while no other thread ran, and otherwise spawned children that import the caller's script
    again: a script without a __main__ guard ran its top level once more per child."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers, thread_name_prefix="rocpd-summary")


# Past this many ranges a table's ids are far sparser than its rows (a span of ids beyond any
# row count: explicit ids from another writer): rather than query millions of empty ranges, the
# caller's GROUP BY reads it.
_MAX_RANGES = 1 << 14


def rowid_ranges(lo: int, hi: int, step: int) -> list[tuple[int, int]]:
    """[a, b) ranges of ``step`` ids covering ``lo``..``hi``; _Unreadable where that would be more
    than _MAX_RANGES of them."""
    if (hi - lo) // step + 1 > _MAX_RANGES:
        raise _Unreadable()
    return [(a, min(a + step, hi + 1)) for a in range(lo, hi + 1, step)]


def rowid_span(conn, table: str) -> tuple[int | None, int | None]:
    """(least id, greatest id) of ``table``, (None, None) when empty. Two queries: SQLite
    answers a lone min()/max() of the rowid from the b-tree's ends, but scans the whole table
    for "SELECT min(id), max(id)". _Unreadable where the connection's views were narrowed to a
    time window: the ranges read the real tables, which know nothing of it."""
    if narrowed(conn):
        raise _Unreadable()
    return (conn.execute(f"SELECT min(id) FROM {table}").fetchone()[0],
            conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0])


def file_plan(src) -> tuple[list, dict]:
    """One file's kernel tables as (path, guid, table, first id, last id + 1) spans, and the
    kernel names per part. Runs wherever ``db.map`` runs it (locally, or on a Dask worker)."""
    spans, names = [], {}
    for part, table in src.tables("kernel_dispatch"):
        if not _NEEDED <= set(part.columns["kernel_dispatch"]):
            return None, None
        lo, hi = rowid_span(src.conn, table)
        if lo is None:
            continue
        spans.append((src.path, part.guid, table, lo, hi + 1))
        sym = src.table(part, "info_kernel_symbol")
        names[part.guid] = {} if sym is None else dict(src.conn.execute(
            f"SELECT id, COALESCE(display_name, kernel_name) FROM {sym}"))
    return spans, names


def plan(db, where: str, params: list, by_pid: bool, workers: int):
    """Tasks (rowid ranges) per part, the symbol names per part, and the total row estimate."""
    tasks, names, spans = [], {}, []
    for file_spans, file_names in db.map(file_plan, label="kernel tables"):
        if file_spans is None:
            raise _Unreadable()
        spans += file_spans
        names.update(file_names)
    total = sum(hi - lo for *_, lo, hi in spans)
    chunk = max(_CHUNK_MIN, min(_CHUNK_MAX, total // max(1, 4 * workers) + 1))
    for path, guid, table, lo, hi in spans:
        for a, b in rowid_ranges(lo, hi - 1, chunk):
            tasks.append(((path, table, a, b, where, list(params), by_pid), guid))
    return tasks, names, total


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # honours taskset/cgroup pinning, unlike cpu_count()
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Ranges already on their way (see prefetch): key -> (connection, tasks, names, futures).
_ahead: dict = {}


def _key(db, where: str, params: list, by_pid: bool) -> tuple:
    return id(db), where, tuple(params), by_pid


def _started(jobs: list, workers: int, total: int):
    """The ranges' queries submitted to threads (their futures, in order), or None where one
    range after another in this thread is as quick."""
    if workers <= 1 or total < _MIN_PARALLEL_ROWS or len(jobs) <= 1:
        return None
    ex = _pool(min(workers, len(jobs)))
    futures = [ex.submit(run_task, job) for job in jobs]
    ex.shutdown(wait=False)  # the threads end with their last range
    return futures


def prefetch(db, where: str, params: list, by_pid: bool = False) -> None:
    """Start the kernel ranges' queries on threads now, where kernel_partials would run them on
    threads anyway, so that what the caller does next (``rocpd summary`` imports pandas and its
    tables: ~0.4 s) overlaps them; kernel_partials with the same arguments takes their results.
    Nothing is started where it would run them otherwise (a Dask connection, one CPU, a small
    or unreadable table)."""
    if getattr(db, "run_tasks", None) is not None:
        return
    workers = _usable_cpus()
    try:
        tasks, names, total = plan(db, where, params, by_pid, workers)
    except _Unreadable:
        return
    futures = _started([t for t, _ in tasks], workers, total)
    if futures is not None:
        # The connection is held with its results: its id cannot name another one meanwhile.
        _ahead[_key(db, where, params, by_pid)] = (db, tasks, names, futures)


def kernel_partials(db, where: str, params: list, by_pid: bool = False, workers: int | None = None):
    ahead = _ahead.pop(_key(db, where, params, by_pid), None)
    if ahead is not None:
        _, tasks, names, futures = ahead
    else:
        remote = getattr(db, "run_tasks", None)  # a Dask connection runs the ranges on its workers
        workers = workers or (db.workers() if remote else _usable_cpus())
        try:
            tasks, names, total = plan(db, where, params, by_pid, workers)
        except _Unreadable:
            return None
        jobs = [t for t, _ in tasks]
        if remote is not None:
            return _frame(tasks, names, remote(run_task, jobs, "kernel summary"), by_pid)
        futures = _started(jobs, workers, total)
        if futures is None:
            return _frame(tasks, names, list(iterate(map(run_task, jobs), "kernel summary",
                                                     len(jobs))), by_pid)
    results = list(iterate((f.result() for f in futures), "kernel summary", len(futures)))
    return _frame(tasks, names, results, by_pid)


def _frame(tasks, names, results, by_pid: bool):
    """The ranges' rows combined per kernel id (and process), named; None where a range could
    not be read this way."""
    import pandas as pd  # here, not at the top: prefetch runs before the caller imports it

    if any(r is None for r in results):
        return None
    rows = [(guid, *r) for (_, guid), res in zip(tasks, results, strict=True) for r in res]
    cols = ["guid", "k1", "pid", "n", "s", "mn", "mx", "ss"]
    df = pd.DataFrame.from_records(rows, columns=cols)
    df["ss"] = df["ss"].astype(object)  # Python ints: an int64 sum of squares would overflow
    if df.empty:
        return pd.DataFrame(columns=["guid", "k1", "k2", "n", "s", "mn", "mx", "ss", "pid", "name", "category"])
    keys = ["guid", "k1", "pid"] if by_pid else ["guid", "k1"]
    df = df.groupby(keys, sort=False).agg(n=("n", "sum"), s=("s", "sum"), mn=("mn", "min"),
                                          mx=("mx", "max"), ss=("ss", "sum"))
    df = df.reset_index()
    df["k2"] = None
    if not by_pid:
        df["pid"] = None
    df["name"] = [names.get(g, {}).get(k) for g, k in zip(df["guid"], df["k1"], strict=True)]
    df["category"] = "KERNEL_DISPATCH"
    return df[["guid", "k1", "k2", "n", "s", "mn", "mx", "ss", "pid", "name", "category"]]
