"""ROCm's ``--kernel-rename`` for reading: kernels named by the ROCTx range they were launched in.

ROCm's exporters name a dispatch by the ``region`` column of its ``kernels`` row instead of its
kernel name (csv.cpp, perfetto.cpp, otf2.cpp), which a capture with rocprofv3 --kernel-rename
fills with the innermost ROCTx range's message. :func:`rename_kernels` re-defines the ``kernels``
view of a connection that way, so every reader of the view (exports, ``rocpd query`` and the
views built on it) sees the new names: the region where it differs from the kernel name (a
renaming capture), else the ROCTx range the launch was made in (recorded by every capture of
ours, so renaming works without capturing again), else the kernel's own name.
"""

from __future__ import annotations

import re

from .readonly import lifted

NAME_SQL = ("CASE WHEN region IS NOT NULL AND region <> '' AND region <> name THEN region"
            " WHEN roctx_range IS NOT NULL THEN roctx_range ELSE name END")


def rename_kernels(db):
    """Re-define ``db``'s ``kernels`` view on every connection it reads through; returns db."""
    for conn, guard in db.view_connections():
        _rename(conn, guard)
    return db


def _rename(conn, guard) -> None:
    row = conn.execute("SELECT sql FROM sqlite_temp_master WHERE type = 'view' AND name = 'kernels'"
                       ).fetchone()
    if row is None:
        return
    cols = [d[0] for d in conn.execute("SELECT * FROM kernels LIMIT 0").description]
    if not {"region", "roctx_range", "name"} <= set(cols):
        return
    body = re.split(r"\sAS\s", row[0], maxsplit=1)[1]  # after CREATE TEMP VIEW "kernels" AS
    items = ", ".join(f"{NAME_SQL} AS name" if c == "name" else f'"{c}"' for c in cols)
    with lifted(conn, guard):
        conn.execute('DROP VIEW temp."kernels"')
        conn.execute(f'CREATE TEMP VIEW "kernels" AS SELECT {items} FROM ({body})')
