"""Region summaries (API calls, ROCTx ranges) combined in SQLite, not pandas.

Kernels, copies and allocations have few distinct names; ROCTx messages have as many as the
program makes (an f-string with a step number gives one per step: a million is ordinary). Their
per-file partials (rocpd.summary's "region" source: count, sum, min, max, sum-of-squares parts per
guid, category and name) are streamed from each file's cursor into a temporary SQLite database,
where they are combined per name and ranked; only the rows shown (``top`` per group: process,
rank or host) come back as a DataFrame. Memory stays that of a batch and the rows shown, whatever
the number of names; the numbers are the pandas path's (the same exact integer partials and
:func:`rocpd.summary.std_dev`). Each table carries ``attrs["rows"]``, the number of rows it has
in full, so a reader can say how many it leaves out.

A Dask connection keeps the pandas path (its workers return the partials); tables then come
whole and are cut to ``top`` per group afterwards.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile

import pandas as pd

from ..io.filters import rank_of, resolve
from .core import COLUMNS, _hosts, file_partials, source_sql, std_dev

_BATCH = 20_000
_PARTS = ("n", "s", "mn", "mx", "hh", "hl", "ll")


def local(db) -> bool:
    """Whether ``db``'s files are read here (a Connection), so their rows can be streamed."""
    return hasattr(db, "sources") and not hasattr(db, "run_tasks")


class Combined:
    """The partial rows of every file in one temporary database (deleted on close)."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="rocpd-summary-", suffix=".db")
        os.close(fd)
        self.conn = sqlite3.connect(self.path)
        self.conn.execute("PRAGMA journal_mode = OFF")
        self.conn.execute("PRAGMA synchronous = OFF")
        self.conn.execute("CREATE TABLE p (guid TEXT, pid INTEGER, category TEXT, name TEXT,"
                          " n INTEGER, s INTEGER, mn INTEGER, mx INTEGER, hh, hl, ll,"
                          " fs REAL DEFAULT 0)")
        self.conn.execute("CREATE TABLE grp (guid TEXT, pid INTEGER, g)")

    def add_file(self, src, sql: str, params: list) -> None:
        try:
            cur = src.conn.execute(sql, params)
            self._copy(cur)
        except sqlite3.OperationalError as e:
            if "integer overflow" not in str(e):
                raise
            marks = ",".join("?" * len(src.guids))
            self.conn.execute(f"DELETE FROM p WHERE guid IN ({marks})", src.guids)
            rows, cols = file_partials(src, sql, params)  # the float form, for this file
            idx = [cols.index(c) for c in ("guid", "pid", "category", "name", "n", "s", "mn", "mx",
                                           "ss")]
            self.conn.executemany("INSERT INTO p VALUES (?,?,?,?,?,?,?,?,0,0,0,?)",
                                  ([r[i] for i in idx] for r in rows))

    def _copy(self, cur) -> None:
        cols = [d[0] for d in cur.description]
        idx = [cols.index(c) for c in ("guid", "pid", "category", "name", *_PARTS)]
        while True:
            batch = cur.fetchmany(_BATCH)
            if not batch:
                return
            self.conn.executemany("INSERT INTO p VALUES (?,?,?,?,?,?,?,?,?,?,?,0)",
                                  [[r[i] for i in idx] for r in batch])

    def close(self) -> None:
        self.conn.close()
        for ext in ("", "-journal"):
            try:
                os.unlink(self.path + ext)
            except FileNotFoundError:
                pass


def region_tables(db, flt, by: str | None, top: int | None, stems: dict) -> dict:
    """{stem: DataFrame} of the region tables, ``stems`` mapping each stem to its categories;
    at most ``top`` rows per group (None: all), each table with attrs["rows"]."""
    where, params = resolve(db, flt)
    sql = source_sql("region", where, by_pid=by == "pid")
    comb = Combined()
    try:
        for src in db.sources():
            comb.add_file(src, sql, params)
        if by in ("rank", "host"):
            keys = rank_of(db) if by == "rank" else _hosts(db)
            comb.conn.executemany("INSERT INTO grp VALUES (?, NULL, ?)", keys.items())
        _combine(comb.conn, by)
        return {stem: _table(comb.conn, by, top, cats) for stem, cats in stems.items()}
    finally:
        comb.close()


def _combine(conn, by) -> None:
    """Table ``a``: one row per (group, category, name) over every file's partials."""
    group = {None: "NULL", "pid": "P.pid", "rank": "G.g", "host": "G.g"}[by]
    join = "LEFT JOIN grp G ON G.guid = P.guid" if by in ("rank", "host") else ""
    sql = (f"CREATE TABLE a AS SELECT {group} AS grp, P.category AS category, P.name AS name,"
           " SUM(n) AS n, SUM(s) AS s, MIN(mn) AS mn, MAX(mx) AS mx, SUM(hh) AS hh,"
           f" SUM(hl) AS hl, SUM(ll) AS ll, TOTAL(fs) AS fs FROM p P {join}"
           " GROUP BY grp, P.category, P.name")
    try:
        conn.execute(sql)
    except sqlite3.OperationalError as e:
        if "integer overflow" not in str(e):
            raise
        conn.execute("DROP TABLE IF EXISTS a")
        for part in ("hh", "hl", "ll"):  # sums past int64: in floats, as the pandas path does
            sql = sql.replace(f"SUM({part})", f"TOTAL({part})")
        conn.execute(sql)


def _table(conn, by, top, categories):
    cats = f"category IN ({','.join('?' * len(categories))})"
    totals = {g: (rows, total) for g, rows, total in conn.execute(
        f"SELECT grp, COUNT(*), SUM(s) FROM a WHERE {cats} GROUP BY grp", categories)}
    limit = " LIMIT ?" if top is not None else ""
    out = []
    for grp in sorted(totals, key=lambda g: (g is None, g)):
        _, total = totals[grp]
        same = "grp IS ?" if grp is None else "grp = ?"
        for name, n, s, mn, mx, hh, hl, ll, fs in conn.execute(
                "SELECT name, n, s, mn, mx, hh, hl, ll, fs FROM a"
                f" WHERE {cats} AND {same} ORDER BY s DESC, name, category{limit}",
                [*categories, grp, *([top] if top is not None else [])]):
            if fs or any(isinstance(v, float) for v in (hh, hl, ll)):  # a file summed in floats
                ss = float(hh) * 2 ** 32 + float(hl) * 2 ** 17 + float(ll) + fs
            else:
                ss = (hh << 32) + (hl << 17) + ll
            rec = {"Name": name if name is not None else "(unknown)", "Calls": n,
                   "TotalDurationNs": s, "AverageNs": s / n if n else 0.0,
                   "Percentage": 100.0 * s / total if total else 0.0, "MinNs": mn, "MaxNs": mx,
                   "StdDev": std_dev(n, s, ss)}
            out.append({by: grp, **rec} if by else rec)
    df = pd.DataFrame(out, columns=[by, *COLUMNS] if by else COLUMNS)
    if by == "rank":
        df["rank"] = df["rank"].astype("Int64")
    df.attrs["rows"] = sum(r for r, _ in totals.values())
    return df
