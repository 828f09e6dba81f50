"""Copy the suffixed tables of several rocpd databases into one file (``rocpd merge``), rebuild the
plain views as UNION ALL over every suffix, and add the human-readable views. Inputs are attached
read-only and never modified."""

from __future__ import annotations

import os
import sqlite3

from .. import _schema
from ..errors import RocpdError
from .files import expand_paths, inspect, open_ro, ro_uri, union_sql
from .output_file import staged


def merge_files(paths, out_path: str, overwrite: bool = False, progress: bool = False) -> str:
    files = expand_paths(paths)
    # Every check before the first write: --force must never unlink an input.
    _check_output(out_path, files)
    if os.path.lexists(out_path) and not overwrite:  # a link there counts: it is not ours
        raise RocpdError("output exists (use --force to replace it)", out_path)
    folder_problem = _why_not_writable(out_path, None)
    if folder_problem:
        raise RocpdError(f"cannot create the merged database: {folder_problem}", out_path)
    # Built under a private name, renamed over out_path (a link there replaced, not followed)
    # when whole: --force never leaves half a database in place of the old one.
    with staged(out_path) as inner:
        try:
            out = sqlite3.connect(inner)
            out.execute("PRAGMA journal_mode = OFF")
            out.execute("PRAGMA synchronous = OFF")
        except sqlite3.Error as e:
            raise RocpdError(f"cannot create the merged database: {_why_not_writable(out_path, e)}",
                             out_path) from None
        try:
            _merge_into(out, out_path, files, progress)
        except sqlite3.OperationalError as e:  # a full disk, an I/O error: name the file
            raise RocpdError(f"cannot write the merged database: {e}", out_path) from None
        finally:
            out.close()
    return out_path


def _why_not_writable(path: str, e: Exception | None) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"its folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable"
    return str(e) if e else ""


def _merge_into(out: sqlite3.Connection, out_path: str, files: list[str], progress: bool) -> str:
    parts = []
    bar = _progress(len(files), progress)
    for i, path in enumerate(files):
        probe = open_ro(path)
        file_parts = inspect(probe, path)
        probe.close()
        out.execute("ATTACH DATABASE ? AS src", (ro_uri(path),))
        for part in file_parts:
            if any(p.suffix == part.suffix for p in parts):
                raise RocpdError(f"guid {part.guid} already merged from another file", path)
            for t in part.columns:
                full = f"rocpd_{t}{part.suffix}"
                (ddl,) = out.execute("SELECT sql FROM src.sqlite_master WHERE name = ?", (full,)).fetchone()
                out.execute(ddl)
                # Named columns: a generated guid column takes no value (tables.sql).
                cols = ", ".join(f'"{r[0]}"' for r in out.execute(_schema.stored_columns_sql("src", full)))
                out.execute(f'INSERT INTO main."{full}" ({cols}) SELECT {cols} FROM src."{full}"')
            parts.append(part)
        out.commit()
        out.execute("DETACH DATABASE src")
        bar(i + 1)
    for t in _schema.TABLES:
        out.execute(f'CREATE VIEW "rocpd_{t}" AS {union_sql(t, [("", p) for p in parts])}')
    for stmt in _schema.view_statements():
        out.execute(stmt)
    out.commit()
    return out_path


def _check_output(out_path: str, files: list[str]) -> None:
    """Refuse an output that is one of the inputs under another spelling (./a.db, absolute path,
    symlink) or another name (hard link): compare resolved paths and (st_dev, st_ino)."""
    out_real = os.path.realpath(out_path)
    try:
        st = os.stat(out_path)
        out_id = (st.st_dev, st.st_ino)
    except OSError:  # not there yet (or a dangling link): only the resolved path can match
        out_id = None
    for f in files:
        fs = os.stat(f)
        if os.path.realpath(f) == out_real or (fs.st_dev, fs.st_ino) == out_id:
            raise RocpdError(f"output is also an input ({f}); choose another -o path", out_path)


def _progress(total: int, enabled: bool):
    import sys

    def tick(done: int):
        if enabled and sys.stderr.isatty():
            width = 30
            n = width * done // max(total, 1)
            end = "\n" if done == total else ""
            sys.stderr.write(f"\rmerging [{'#' * n}{'.' * (width - n)}] {done}/{total}{end}")
            sys.stderr.flush()
    return tick
