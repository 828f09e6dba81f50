"""An SQLite authorizer that keeps analysis connections read-only.

``mode=ro`` and ``PRAGMA query_only`` protect the opened files, but not the file system: ``ATTACH
'x.db'`` and ``VACUUM INTO 'y.db'`` still create files (VACUUM INTO attaches its output, so SQLite
asks the authorizer for SQLITE_ATTACH with the output's name). The authorizer sees what a statement
does, whatever its spelling, so this is an allow-list of read actions, not a check on the SQL text.
It is installed after the connection's own ATTACHes and TEMP views (:mod:`rocpd.io.connection`).
"""

from __future__ import annotations

import contextlib
import sqlite3

from ..errors import RocpdError

# Everything else (ATTACH, DETACH, INSERT, UPDATE, DELETE, CREATE*, DROP*, ALTER, ANALYZE, REINDEX,
# virtual tables) is refused, TEMP objects included: a query must not leave anything behind.
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
            sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT}
# Pragmas that take an argument and only report (a table, index or check to look at).
_PRAGMA_LOOKUPS = {"table_info", "table_xinfo", "table_list", "index_info", "index_xinfo",
                   "index_list", "foreign_key_list", "foreign_key_check", "integrity_check",
                   "quick_check"}
# Pragmas that act even without an argument.
_PRAGMA_ACTIONS = {"wal_checkpoint", "incremental_vacuum", "optimize"}
# SQLite checks every schema change as an INSERT/UPDATE/DELETE on the schema table besides its own
# CREATE/DROP/ALTER code (refused below); reading a pragma table-valued function does the same
# checks without writing anything. A statement cannot write the schema table itself while
# writable_schema is off, and that pragma is refused.
_SCHEMA_TABLES = {"sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema"}
_SCHEMA_ROWS = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}
_NAMES = {getattr(sqlite3, f"SQLITE_{n}"): n.replace("_", " ") for n in (
    "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE",
    "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER",
    "DROP_VIEW", "INSERT", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE",
    "CREATE_VTABLE", "DROP_VTABLE")}


class Guard:
    """The authorizer of one connection; remembers what it refused last, for the error message
    (SQLite itself only says "not authorized")."""

    def __init__(self):
        self.denied: str | None = None

    def __call__(self, action, arg1, arg2, _db, _trigger):
        if action in _ALLOWED or (action in _SCHEMA_ROWS and (arg1 or "").lower() in _SCHEMA_TABLES):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            if name not in _PRAGMA_ACTIONS and (arg2 is None or name in _PRAGMA_LOOKUPS):
                return sqlite3.SQLITE_OK
            self.denied = f"PRAGMA {name}"
        else:
            self.denied = _NAMES.get(action, f"SQLite action {action}")
        return sqlite3.SQLITE_DENY

    def error(self, exc: sqlite3.Error) -> RocpdError:
        """The RocpdError for ``exc`` raised by a statement run after :meth:`reset`."""
        if self.denied is None:
            return RocpdError(f"SQL error: {exc}")
        return RocpdError(f"{self.denied} is not allowed: analysis connections are read-only (no"
                          " ATTACH, VACUUM INTO or writes); name every database on the command"
                          " line and read them with SELECT")

    def reset(self) -> None:
        self.denied = None


def install(conn: sqlite3.Connection) -> Guard:
    guard = Guard()
    conn.set_authorizer(guard)
    return guard


@contextlib.contextmanager
def lifted(conn: sqlite3.Connection, guard: Guard):
    """Within the block, ``conn`` takes our own statements (re-defining its TEMP views, as when it
    was opened); the read-only guard is back afterwards, whatever happened."""
    conn.set_authorizer(None)
    conn.execute("PRAGMA query_only = 0")
    try:
        yield conn
    finally:
        conn.execute("PRAGMA query_only = 1")
        conn.set_authorizer(guard)


def run_view_script(conn: sqlite3.Connection, guard: Guard, script: str) -> None:
    """Run ``script`` (statements separated by ';') allowing CREATE/DROP TEMP VIEW besides reads:
    ROCm's ``rocpd query --script`` defines views this way. TEMP views live in the connection's
    memory and leave nothing on disk; everything else stays refused."""
    extra = {sqlite3.SQLITE_CREATE_TEMP_VIEW, sqlite3.SQLITE_DROP_TEMP_VIEW}

    def views_too(action, arg1, arg2, db, trigger):
        if action in extra:
            return sqlite3.SQLITE_OK
        if action in _SCHEMA_ROWS and (arg1 or "").lower() in _SCHEMA_TABLES:
            return sqlite3.SQLITE_OK
        return guard(action, arg1, arg2, db, trigger)

    conn.set_authorizer(None)
    conn.execute("PRAGMA query_only = 0")
    conn.set_authorizer(views_too)
    try:
        for stmt in script.split(";"):
            if stmt.strip():
                guard.reset()
                try:
                    conn.execute(stmt)
                except sqlite3.Error as e:
                    raise guard.error(e) from None
    finally:
        conn.set_authorizer(None)
        conn.execute("PRAGMA query_only = 1")
        conn.set_authorizer(guard)
