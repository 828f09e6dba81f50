"""B5: where the bytes of a rocprof database go, per record.

  python3 benchmarks/gpu_b5_bytes.py DB [DB...]

For each database: file size / records (records = rows of the record tables: kernel
dispatches, copies, allocations, regions, samples); per table and index, the bytes on disk
(dbstat, when SQLite has it; else page counts are not split); the bytes of the guid text
alone; and what a copy would weigh after VACUUM, without the start indexes, and with 64 KiB
pages (each from a fresh VACUUM INTO copy, the original is never changed); and the string
table by kind of string (what points at it), each kind's bytes in the table and in its unique
index measured by SQLite in a scratch file holding that kind alone.
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


# What points at a rocpd_string row, in the order a string is classed (first match wins).
STRING_KINDS = (
    ("category", "SELECT category_id FROM rocpd_event"),
    ("kernel name", "SELECT region_name_id FROM rocpd_kernel_dispatch"),
    ("copy name", "SELECT name_id FROM rocpd_memory_copy UNION SELECT region_name_id FROM rocpd_memory_copy"),
    ("region name (API, ROCTx)", "SELECT name_id FROM rocpd_region"),
    ("track name", "SELECT name_id FROM rocpd_track"),
    # Databases that kept a launch site as a rocpd_string row of its frames (before
    # PYTHON_LAUNCH_SITE nodes): {"site": <that string's id>}.
    ("launch site (frames JSON)", "SELECT json_extract(call_stack, '$.site') FROM rocpd_event"
     " WHERE call_stack LIKE '{\"site\":%' AND NOT EXISTS (SELECT 1 FROM rocpd_string"
     " WHERE string = 'PYTHON_LAUNCH_SITE')"),
)


def _string_table(con):
    return next((t for t in tables(con) if t.startswith("rocpd_string")), None)


def string_kinds(con, page: int) -> list[tuple[str, int, int, int, int]]:
    """[(kind, strings, text bytes, table bytes, index bytes)]: every rocpd_string row classed
    by what points at it ("other": nothing does, e.g. ROCTx messages, which live in extdata);
    the bytes of each kind measured by SQLite in a scratch file holding that kind alone."""
    if _string_table(con) is None:
        return []
    kind_of = {}
    for kind, sql in STRING_KINDS:
        try:
            ids = [r[0] for r in con.execute(sql)]
        except sqlite3.OperationalError:  # a table this database lacks
            continue
        for i in ids:
            kind_of.setdefault(i, kind)
    groups = {}
    for sid, text in con.execute("SELECT id, string FROM rocpd_string"):
        groups.setdefault(kind_of.get(sid, "other"), []).append((sid, text))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, rows in sorted(groups.items(), key=lambda kv: -sum(len(t.encode()) for _, t in kv[1])):
            path = os.path.join(tmp, "k.db")
            if os.path.exists(path):
                os.remove(path)
            k = sqlite3.connect(path)
            k.execute(f"PRAGMA page_size={page}")
            k.execute("CREATE TABLE s (id INTEGER PRIMARY KEY, string TEXT NOT NULL UNIQUE)")
            k.executemany("INSERT INTO s VALUES (?, ?)", rows)
            k.commit()
            size = dict(k.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
            k.close()
            out.append((kind, len(rows), sum(len(t.encode()) for _, t in rows), size.get("s", 0),
                        sum(v for n, v in size.items() if n.startswith("sqlite_autoindex_s"))))
    return out


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
    try:
        kinds = string_kinds(con, page)
    except sqlite3.OperationalError as e:
        kinds = []
        print(f"  (no string breakdown: {e})")
    if kinds:
        print(f"  {'rocpd_string by kind':28s} {'strings':>7s} {'text B':>9s} {'mean':>6s} "
              f"{'table B':>9s} {'index B':>9s} {'B/rec':>6s}")
        for kind, cnt, text, tb, ib in kinds:
            print(f"  {kind[:28]:28s} {cnt:7d} {text:9d} {text / cnt:6.0f} {tb:9d} {ib:9d} "
                  f"{(tb + ib) / n:6.1f}")
    try:
        sites = con.execute("SELECT count(*), total(E.parent_stack_id = 0), total(length(E.call_stack))"
                            " FROM rocpd_event E JOIN rocpd_string C ON C.id = E.category_id"
                            " WHERE C.string = 'PYTHON_LAUNCH_SITE'").fetchone()
    except sqlite3.OperationalError:
        sites = (0, 0, 0)
    if sites[0]:
        print(f"  launch sites as rocpd_event nodes: {sites[0] - int(sites[1])} sites and "
              f"{int(sites[1])} callers' nodes, {int(sites[2])} B of frames = {sites[2] / n:.1f} B/record")
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
