"""Finding and opening rocpd databases: paths, globs, folders and package indexes to files; a
file opened read-only; its parts (guid-suffixed table sets) checked against schema v3."""

from __future__ import annotations

import glob
import os
import re
import sqlite3
from dataclasses import dataclass, field
from urllib.parse import quote

from .. import _schema
from ..errors import RocpdError
from .package import is_index, is_package_dir, read_index

_SUFFIX_RE = re.compile(r"^rocpd_metadata(_[0-9A-Za-z_]*)?$")


@dataclass
class Part:
    path: str
    suffix: str
    guid: str
    columns: dict[str, list[str]]  # table (allow-listed short name) -> columns present
    metadata: dict[str, str] = field(default_factory=dict)

    def table(self, name: str) -> str:
        return f'"rocpd_{name}{self.suffix}"'



def _flatten(paths):
    # ROCm's rocpd.connect takes one list of paths; ours takes paths as arguments: both work.
    for p in paths:
        if isinstance(p, (list, tuple, set)):
            yield from _flatten(p)
        else:
            yield p


def expand_paths(paths) -> list[str]:
    """Files, globs, directories (searched recursively for *.db), package index files and
    ``.rpdb`` folders (:mod:`rocpd.io.package`), also nested in lists -> unique files in order."""
    out: list[str] = []
    for p in _flatten(paths):
        p = os.fspath(p)
        if is_package_dir(p) or is_index(p):
            found = read_index(p)
            if not found:
                raise RocpdError("package index names no databases", p)
            missing = [f for f in found if not os.path.isfile(f)]
            if missing:
                raise RocpdError(f"package index names a missing database {missing[0]}", p)
            out.extend(found)
        elif os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "**", "*.db"), recursive=True))
            if not found:
                raise RocpdError("directory holds no .db files", p)
            out.extend(found)
        elif any(ch in p for ch in "*?["):
            found = sorted(glob.glob(p, recursive=True))
            if not found:
                raise RocpdError("pattern matches no files", p)
            out.extend(found)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise RocpdError("no such file", p)
    seen, uniq = set(), []
    for p in out:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            uniq.append(p)
    if not uniq:
        raise RocpdError("no database given")
    return uniq


def ro_uri(path: str) -> str:
    # mode=ro and not immutable=1: a database still being written (WAL) must be read consistently.
    return "file:" + quote(os.path.abspath(path)) + "?mode=ro"


def open_ro(path: str) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(ro_uri(path), uri=True, check_same_thread=False)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        raise RocpdError(f"not a readable SQLite database ({e})", path) from None
    return conn


def check_database(path: str) -> list[Part]:
    """What every reader checks before trusting a file, for commands that only name it (``rocpd
    package``): a readable SQLite file (SQLite refuses one shorter than its header says) in rocpd schema v3; its parts."""
    conn = open_ro(path)
    try:
        return inspect(conn, path)
    finally:
        conn.close()


def inspect(conn: sqlite3.Connection, path: str, schema: str = "main") -> list[Part]:
    """Find the parts of one attached file, checking it is rocpd schema v3."""
    try:
        names = [r[0] for r in conn.execute(
            f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as e:
        raise RocpdError(f"corrupt or not a SQLite database ({e})", path) from None
    parts = []
    tables = set(names)
    for name in names:
        m = _SUFFIX_RE.match(name)
        if not m:
            continue
        suffix = m.group(1) or ""
        try:
            meta = dict(conn.execute(f'SELECT tag, value FROM {schema}."{name}"').fetchall())
        except sqlite3.DatabaseError as e:
            raise RocpdError(f"corrupt rocpd metadata ({e})", path) from None
        version = str(meta.get("schema_version", "")).strip()
        if version.split(".")[0] != _schema.SCHEMA_VERSION:
            raise RocpdError(f"unknown rocpd schema version {version or '(none)'!r} (supported: 3)", path)
        columns = {}
        for t in _schema.TABLES:
            full = f"rocpd_{t}{suffix}"
            if full in tables:
                columns[t] = [r[0] for r in conn.execute(_schema.columns_sql(schema, full))]
        guid = meta.get("guid") or suffix[1:].replace("_", "-")
        parts.append(Part(path, suffix, guid, columns, meta))
    if not parts:
        raise RocpdError("not a rocpd database (no rocpd_metadata table)" + _wal_hint(path), path)
    return parts


def _wal_hint(path: str) -> str:
    """Why a file may show no rocpd tables: a writer killed before its checkpoint leaves them in
    NAME.db-wal, and a copy of the .db alone is an empty WAL-mode database. Bytes 18 and 19 of the
    header (file format versions) are 2 in WAL mode."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return ""
    if not head.startswith(b"SQLite format 3\0") or head[18:20] != b"\2\2":
        return ""
    # Empty counts as missing: opening a WAL database, even read-only, creates an empty -wal.
    if os.path.exists(path + "-wal") and os.path.getsize(path + "-wal") > 0:
        return ""
    name = os.path.basename(path)
    return (f": it is in WAL mode and {name}-wal is missing or empty; the data of an unfinished run"
            f" lives there: copy {name}-wal along with {name}")


def _writer_alive(path: str) -> bool | None:
    """Whether a process holds the writer's lock on ``path`` (rocprof flock()s a database while
    it writes it), read from /proc/locks: nothing is opened, so nothing can change. None where
    that cannot be known."""
    try:
        st = os.stat(path)
        with open("/proc/locks") as fh:
            locks = fh.read()
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} "
    return any(line.split()[1] == "FLOCK" and key in line
               for line in locks.splitlines() if "->" not in line)


def incomplete_note(path: str, parts: list[Part], conn: sqlite3.Connection) -> str | None:
    """One line for a database its writer did not finish (metadata ``rocprof.status``: written
    "in-progress" at creation, "complete" at close; "disk-full"/"write-error" when the output
    failed), with the last record's time; None for a complete one or another writer's."""
    meta = next((p.metadata for p in parts
                 if p.metadata.get("rocprof.status", "complete") != "complete"), None)
    if meta is None:
        return None
    status = meta["rocprof.status"]
    when = "an unknown time"
    try:
        part = next(p for p in parts if p.metadata is meta)
        (start,) = conn.execute(f"SELECT min(start) FROM main.{part.table('info_process')}").fetchone()
        when = f"{(int(meta['rocprof.last_record_ns']) - int(start)) / 1e9:.3f} s after its start"
    except (KeyError, StopIteration, TypeError, ValueError, sqlite3.Error):
        pass
    if status != "in-progress":
        return (f"{path} is incomplete ({status}) from {when}: records after that were dropped "
                "(counted in metadata rocprof.dropped_records.storage)")
    if _writer_alive(path):
        return f"{path} is still being written: records after {when} are not in it yet"
    wal = path + "-wal"
    keep = (f"; keep {os.path.basename(wal)} beside it: it holds records the .db alone lacks"
            if os.path.exists(wal) and os.path.getsize(wal) > 0 else
            "; its -wal is not beside it: this file holds what was checkpointed")
    return f"{path} is incomplete: process killed at {when}; records after that may be missing{keep}"


def union_sql(table: str, sources: list[tuple[str, Part]]) -> str:
    """SELECT over every part's copy of ``table``; columns a part lacks read as NULL (3.0.x additions
    and older writers differ), columns beyond the contract are kept after the canonical ones.
    An empty schema leaves names unqualified, as a view stored in a file needs: SQLite refuses to
    attach a file whose views name ``main``."""
    cols = list(_schema.canonical_columns()[table])
    for _, part in sources:
        cols += [c for c in part.columns.get(table, []) if c not in cols]
    selects = []
    for schema, part in sources:
        have = part.columns.get(table)
        if have is None:
            continue
        items = ", ".join(f'"{c}"' if c in have else f'NULL AS "{c}"' for c in cols)
        selects.append(f"SELECT {items} FROM {schema + '.' if schema else ''}{part.table(table)}")
    if not selects:
        return "SELECT " + ", ".join(f'NULL AS "{c}"' for c in cols) + " WHERE 0"
    return "\nUNION ALL\n".join(selects)
