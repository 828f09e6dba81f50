"""rocpd: read and analyse rocpd (schema v3) profiling databases.

``import rocpd`` needs only the standard library; pandas and the optional packages are imported
when a function that needs them is called.
"""

from __future__ import annotations

from .errors import RocpdError

__all__ = ["connect", "execute", "read_agents", "read_processes", "read_threads", "RocpdError",
           "Connection"]


def connect(*paths, progress: bool = False, strict: bool = False):
    """Open rocpd databases (files, globs, directories) read-only as one :class:`Connection`.

    A file that cannot be read (corrupt, not rocpd) among several is left out with a one-line
    warning on stderr and listed in ``Connection.skipped``; ``strict=True`` raises instead.
    """
    from .connection import Connection

    return Connection(*paths, progress=progress, strict=strict)


def __getattr__(name):
    if name == "Connection":
        from .connection import Connection

        return Connection
    raise AttributeError(name)


def _conn(db_or_path):
    return db_or_path if hasattr(db_or_path, "parts") else connect(db_or_path)


# ROCm's module-level names, kept for scripts written against ROCm's rocpd package.
def execute(db, sql: str, params=()):
    """Run read-only SQL over ``db`` (a Connection or a path); returns a sqlite3 cursor."""
    return _conn(db).execute(sql, params)


def read_agents(db):
    return _conn(db).agents()


def read_processes(db):
    return _conn(db).processes()


def read_threads(db):
    return _conn(db).threads()
