"""B5: where the bytes of a rocprof database go, per record.

  python3 benchmarks/gpu_b5_bytes.py DB [DB...]

For each database: file size / records (records = rows of the record tables: kernel
dispatches, copies, allocations, regions, samples); per table and index, the bytes on disk
(dbstat, when SQLite has it; else page counts are not split); the bytes of the guid text
alone; and what a copy would weigh after VACUUM, without the start indexes, and with 64 KiB
pages (each from a fresh VACUUM INTO copy, the original is never changed).
"""

import os
import sqlite3
import sys
import tempfile

RECORD_TABLES = ("kernel_dispatch", "memory_copy", "memory_allocate", "region", "sample")


def tables(con):
    return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]


def n_records(con):
    n = 0
    for t in tables(con):
        if any(t.startswith(f"rocpd_{k}") for k in RECORD_TABLES):
            n += con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    return n


def vacuum_copy(db, tmp, name, prep=None, page_size=None):
    path = os.path.join(tmp, name)
    if os.path.exists(path):
        os.remove(path)
    src = sqlite3.connect(db)
    src.execute(f"VACUUM INTO '{path}'")
    src.close()
    con = sqlite3.connect(path)
    if prep:
        for sql in prep(con):
            con.execute(sql)
        con.commit()
    if page_size:
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute(f"PRAGMA page_size={page_size}")
    con.execute("VACUUM")
    con.close()
    return os.path.getsize(path)


def report(db, vacuum=True):
    size = os.path.getsize(db)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n = n_records(con)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    print(f"{os.path.basename(db)}: {size} B, {n} records, {size / n:.1f} B/record, page {page} B, "
          f"freelist {con.execute('PRAGMA freelist_count').fetchone()[0]} pages")
    try:
        rows = con.execute("SELECT name, sum(pgsize), sum(payload), sum(ncell), sum(unused) "
                           "FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        print(f"  {'table/index':40s} {'bytes':>10s} {'B/rec':>7s} {'payload':>10s} {'cells':>8s} {'unused':>9s}")
        for name, pg, pay, cells, unused in rows[:12]:
            short = name.split("_0")[0] if "_" in name else name
            print(f"  {short[:40]:40s} {pg:10d} {pg / n:7.1f} {pay:10d} {cells:8d} {unused:9d}")
    except sqlite3.OperationalError as e:
        print(f"  (no dbstat: {e})")
    guid = 0
    for t in tables(con):
        # Only a stored guid costs bytes: by default the column is generated (tables.sql).
        cols = [r[1] for r in con.execute(f'PRAGMA table_xinfo("{t}")') if r[6] == 0]
        if "guid" in cols:
            guid += con.execute(f'SELECT coalesce(sum(length(guid)), 0) FROM "{t}"').fetchone()[0]
    print(f"  guid text alone: {guid} B = {guid / n:.1f} B/record (the rocpd contract: guid on every row, "
          f"an event row per record)")
    idx = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")]
    con.close()
    if not vacuum:
        return
    with tempfile.TemporaryDirectory() as tmp:
        v = vacuum_copy(db, tmp, "v.db")
        ni = vacuum_copy(db, tmp, "ni.db", prep=lambda c: [f'DROP INDEX "{i}"' for i in idx])
        big = vacuum_copy(db, tmp, "p64.db", page_size=65536)
    print(f"  after VACUUM: {v / n:.1f} B/record; VACUUM without the {len(idx)} start indexes: "
          f"{ni / n:.1f}; VACUUM with 64 KiB pages: {big / n:.1f}")


if __name__ == "__main__":
    for db in sys.argv[1:]:
        report(db)
