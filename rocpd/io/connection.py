"""Attach rocpd databases (found, opened read-only and checked by files.py) and expose the plain
and human-readable views over them.

A *part* is one guid-suffixed set of tables. A file written by a profiled process holds one part; a
file made by ``rocpd merge`` holds several. Readers never touch suffixed names outside this module
and files.py.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
import tempfile
import types
from dataclasses import dataclass

from .. import _schema
from ..errors import RocpdError
from . import readonly
from .files import Part, expand_paths, incomplete_note, inspect, open_ro, ro_uri, union_sql
from .html_view import connection_html
from .merge import merge_files


@dataclass(frozen=True, eq=False)
class Source:
    """One input database as readers see it. ``conn`` is the file's own read-only connection:
    its plain and human-readable TEMP views (``kernels``, ``rocpd_region`` ...) cover this file
    only, so a reader can query each file on its own and combine; :meth:`tables` names the parts'
    real (guid-suffixed) tables on that connection. Rank, pid and host are not known before a
    query; they come from the tables (``rocpd.io.filters.rank_of``, ``rocpd_info_node``)."""

    index: int  # position among the inputs, as in Connection.paths
    path: str
    conn: sqlite3.Connection
    parts: tuple[Part, ...]

    @property
    def alias(self) -> str:
        """Schema name of this file on the union connection when that attaches several files."""
        return f"db{self.index}"

    @property
    def guids(self) -> list[str]:
        return [p.guid for p in self.parts]

    def table(self, part: Part, name: str) -> str | None:
        """``part``'s real table ``name`` qualified for ``conn``; None where the part lacks it."""
        if name not in _schema.TABLES:  # the allow-list: names reach SQL unquoted by callers
            raise ValueError(f"unknown rocpd table {name!r} (one of {', '.join(_schema.TABLES)})")
        return f"main.{part.table(name)}" if name in part.columns else None

    def tables(self, name: str) -> list[tuple[Part, str]]:
        """(part, qualified real table on ``conn``) for every part that holds table ``name``."""
        return [(p, t) for p in self.parts if (t := self.table(p, name)) is not None]


def build_views(conn: sqlite3.Connection, sources: list[tuple[str, Part]]) -> None:
    for t in _schema.TABLES:
        conn.execute(f'CREATE TEMP VIEW "rocpd_{t}" AS {union_sql(t, sources)}')
    for stmt in _schema.view_statements():
        conn.execute(stmt.replace("CREATE VIEW IF NOT EXISTS", "CREATE TEMP VIEW", 1))


_said: set[str] = set()


def _say_once(note: str | None) -> None:
    """Every reader (summary, analyze, report, exports, rocpd.connect in a notebook) says once
    per process that a database is incomplete."""
    if note and note not in _said:
        _said.add(note)
        print(f"rocpd: warning: {note}", file=sys.stderr)


class FileHandle:
    """One file on its own read-only connection, with TEMP views over its parts."""

    def __init__(self, path: str):
        self.path = path
        self.conn = open_ro(path)
        try:
            self.parts = inspect(self.conn, path)
            _say_once(incomplete_note(path, self.parts, self.conn))
            build_views(self.conn, [("main", p) for p in self.parts])
        except BaseException:
            self.conn.close()  # a skipped file must not stay open
            raise
        self.conn.execute("PRAGMA query_only = 1")
        self.guard = readonly.install(self.conn)  # last: the TEMP views above are ours

    def close(self):
        self.conn.close()


def open_files(paths: list[str], strict: bool) -> tuple[list[FileHandle], list[tuple[str, str]]]:
    """A handle per readable file, and (path, reason) per file left out. One corrupt or foreign
    file among many (a directory scan, a crashed rank) must not cost the summary of the others:
    it is left out with a one-line warning on stderr, unless ``strict``. No readable file at all
    is an error."""
    files, skipped, errors = [], [], []
    for p in paths:
        try:
            files.append(FileHandle(p))
        except RocpdError as e:
            if strict or len(paths) == 1:
                for f in files:
                    f.close()
                raise
            errors.append(e)
            skipped.append((p, str(e)))
    if not files:
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        raise RocpdError(f"none of the {len(paths)} databases is readable ({errors[0]}{more})")
    for e in errors:
        # str(e) starts with the path: "rocpd: warning: PATH: REASON; skipped"
        print(f"rocpd: warning: {e}; skipped", file=sys.stderr)
    return files, skipped


class _Higher:
    """A Connection method implemented in a higher layer: the module is imported on first use and
    the function bound to the instance (``Connection.kernels`` on the class is the function)."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __get__(self, obj, owner=None):
        root = __package__.rpartition(".")[0]  # rocpd: higher layers are its sub-packages
        func = getattr(importlib.import_module(f"{root}.{self.module}"), self.name)
        return func if obj is None else types.MethodType(func, obj)


class FramesAPI:
    """The pandas API (frames.py), a layer above the connections: bound lazily, so that importing
    a connection loads neither frames/summary/fastagg nor pandas (and no import cycle forms).
    Shared by Connection and rocpd.cluster's DaskConnection."""

    agents = _Higher("summary.frames", "agents")
    busy = _Higher("summary.frames", "busy")
    kernel_stats = _Higher("summary.frames", "kernel_stats")
    kernels = _Higher("summary.frames", "kernels")
    memory_allocations = _Higher("summary.frames", "memory_allocations")
    memory_copies = _Higher("summary.frames", "memory_copies")
    memory_copy_stats = _Higher("summary.frames", "memory_copy_stats")
    metric_samples = _Higher("device_metrics.samples", "samples")
    processes = _Higher("summary.frames", "processes")
    rank_of = _Higher("summary.frames", "rank_of")
    region_stats = _Higher("summary.frames", "region_stats")
    regions = _Higher("summary.frames", "regions")
    run_bounds = _Higher("summary.frames", "run_bounds")
    samples = _Higher("summary.frames", "samples")
    threads = _Higher("summary.frames", "threads")

    # Both connections close the same way in a `with` and render the same way in Jupyter.
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _repr_html_(self) -> str:
        return connection_html(self)


class Connection(FramesAPI):
    """Several rocpd databases read as one. Use :func:`rocpd.connect`."""

    def __init__(self, *paths, progress: bool = False, strict: bool = False):
        self.files, self.skipped = open_files(expand_paths(paths), strict)
        self.paths = [f.path for f in self.files]
        self.parts = [part for f in self.files for part in f.parts]
        self._sources = tuple(Source(i, f.path, f.conn, tuple(f.parts)) for i, f in enumerate(self.files))
        self._union: sqlite3.Connection | None = None
        self._guard: readonly.Guard | None = None
        self._merged: str | None = None
        self._progress = progress

    def sources(self) -> tuple[Source, ...]:
        """One :class:`Source` per input database, in the order of ``paths``. Per-file readers
        iterate these; a temporary merged copy made for more than 10 inputs is not among them."""
        return self._sources

    def map(self, fn, *args, label: str | None = None, parallel: bool = False) -> list:
        """``[fn(source, *args) for source in sources()]``: the one way summaries read files one
        by one, so that a Dask connection (:mod:`rocpd.cluster`) can run the same ``fn`` on its
        workers. ``parallel``: up to 4 threads (sqlite3 releases the GIL while it scans)."""
        del label  # a local scan of a few files draws no bar
        files = self.sources()
        if parallel and len(files) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(len(files), 4)) as ex:
                return list(ex.map(lambda s: fn(s, *args), files))
        return [fn(s, *args) for s in files]

    # -- the union connection (all files in one SQL namespace) ---------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._union is None:
            self._union = self._open_union()
        return self._union

    def _open_union(self) -> sqlite3.Connection:
        if len(self.files) == 1:
            self._guard = self.files[0].guard
            return self.files[0].conn
        conn = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
        if len(self.files) > conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED):
            # SQLite attaches at most 10 files: past that, read one merged temporary copy.
            conn.close()
            fd, self._merged = tempfile.mkstemp(prefix="rocpd-merged-", suffix=".db")
            os.close(fd)
            merge_files(self.paths, self._merged, overwrite=True, progress=self._progress)
            handle = FileHandle(self._merged)
            self.files.append(handle)
            self._guard = handle.guard
            return handle.conn
        attached = []
        for src in self._sources:
            conn.execute(f"ATTACH DATABASE ? AS {src.alias}", (ro_uri(src.path),))
            attached += [(src.alias, p) for p in src.parts]
        build_views(conn, attached)
        conn.execute("PRAGMA query_only = 1")
        # After our own ATTACHes: from here on the user's SQL can neither attach nor write.
        self._guard = readonly.install(conn)
        return conn

    def view_connections(self) -> list[tuple[sqlite3.Connection, readonly.Guard]]:
        """(connection, its read-only guard) for every connection readers query through: each
        file's and the union's. What re-defines a view (a time window, kernel renaming) must
        re-define it on all of them."""
        union = self.conn  # opened now, so its guard is known
        pairs = [(f.conn, f.guard) for f in self.files]
        if all(union is not c for c, _ in pairs):
            pairs.append((union, self._guard))
        return pairs

    def execute(self, sql: str, params=()):
        """Run read-only SQL over the plain (rocpd_*) and human-readable views of every file."""
        conn = self.conn
        self._guard.reset()
        try:
            return conn.execute(sql, params)
        except sqlite3.Error as e:
            raise self._guard.error(e) from None

    def cursor(self):
        """A cursor over every file's views, as on ROCm's RocpdImportData (a sqlite3.Connection
        look-alike); read-only like :meth:`execute`."""
        return self.conn.cursor()

    def read_sql(self, sql: str, params=()):
        import pandas as pd

        cur = self.execute(sql, params)
        cols = [d[0] for d in cur.description] if cur.description else []
        return pd.DataFrame.from_records(cur.fetchall(), columns=cols)

    def metadata(self) -> list[tuple[str, str, str]]:
        """(guid, tag, value) of every part."""
        return [(p.guid, k, v) for p in self.parts for k, v in p.metadata.items()]

    def dropped_records(self) -> dict[str, int]:
        """Sum of every ``rocprof.dropped_records*`` metadata row, per tag, over all parts."""
        out: dict[str, int] = {}
        for p in self.parts:
            for k, v in p.metadata.items():
                if k.startswith("rocprof.dropped_records"):
                    try:
                        out[k] = out.get(k, 0) + int(float(v))
                    except ValueError:
                        out[k] = out.get(k, 0)
        return out

    def dropped_total(self) -> int:
        """Records lost, over all parts. ``rocprof.dropped_records`` is each part's total and the
        ``rocprof.dropped_records.<cause>`` rows are its breakdown: adding both counted every
        drop twice. A part with only per-cause rows (older writers) contributes their sum."""
        total = 0
        for p in self.parts:
            whole, causes = None, 0
            for k, v in p.metadata.items():
                try:
                    n = int(float(v))
                except ValueError:
                    continue
                if k == "rocprof.dropped_records":
                    whole = n
                elif k.startswith("rocprof.dropped_records."):
                    causes += n
            total += whole if whole is not None else causes
        return total

    def close(self):
        if self._union is not None and all(self._union is not f.conn for f in self.files):
            self._union.close()
        for f in self.files:
            f.close()
        if self._merged:
            for ext in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(self._merged + ext)
                except FileNotFoundError:
                    pass
            self._merged = None
