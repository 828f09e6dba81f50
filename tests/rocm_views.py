"""ROCm's own view SQL (the external judge, tests/oracle.py) over a database our writer produced.

Each of ROCm's views is created as a TEMP view of the same name in a read-only connection, so it
shadows the view our writer stored (main.<name>) while both read the same tables. ROCm's views
INNER-JOIN every id column: a NULL or dangling id hides a row without an error, which is what
`compare` looks for, domain by domain, counts and summed durations side by side.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import oracle


def connect_with_rocm_views(db: str | Path) -> sqlite3.Connection:
    rocm_sql = oracle.sql()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for name in ("data_views.sql", "summary_views.sql"):
        text = (rocm_sql / name).read_text()
        text = re.sub(r"CREATE\s+VIEW(\s+IF\s+NOT\s+EXISTS)?", "CREATE TEMP VIEW", text)
        con.executescript(text)
    return con


# (domain, our view and the rows it counts, ROCm's view): counts and total durations must match.
DOMAINS = [
    ("kernels", "main.kernels", "temp.kernels"),
    ("memory_copies", "main.memory_copies", "temp.memory_copies"),
    ("memory_allocations", "main.memory_allocations", "temp.memory_allocations"),
    ("regions", "main.regions", "temp.regions"),
]


def compare(db: str | Path) -> dict[str, tuple]:
    """{domain: ((our count, our total ns), (ROCm's count, ROCm's total ns))} for every domain,
    plus samples (count only) and top_kernels/busy (ROCm's summaries over our tables)."""
    con = connect_with_rocm_views(db)
    out = {}
    for domain, ours, rocm in DOMAINS:
        out[domain] = (con.execute(f"SELECT count(*), total(duration) FROM {ours}").fetchone(),
                       con.execute(f"SELECT count(*), total(duration) FROM {rocm}").fetchone())
    out["samples"] = (con.execute("SELECT count(*) FROM main.samples").fetchone(),
                      con.execute("SELECT count(*) FROM temp.samples").fetchone())
    out["top_kernels"] = (
        con.execute("SELECT total(total_calls), round(total(total_duration), 3) "
                    "FROM main.top_kernels").fetchone(),
        con.execute("SELECT total(total_calls), round(total(total_duration), 3) "
                    "FROM temp.top_kernels").fetchone())
    out["busy"] = (con.execute("SELECT agent_id, GpuTime FROM main.busy ORDER BY 1").fetchall(),
                   con.execute("SELECT agent_id, GpuTime FROM temp.busy ORDER BY 1").fetchall())
    con.close()
    return out


def mismatches(db: str | Path) -> dict[str, tuple]:
    return {k: v for k, v in compare(db).items() if v[0] != v[1]}
