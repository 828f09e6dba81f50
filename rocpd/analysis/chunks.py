"""A process's GPU work read again on demand, in time order, a chunk of rows at a time: what the
streamed analysis (rocpd.analysis.streamed) sweeps instead of holding one frame row per op.

Kernels come from SQLite in (start, id) order, which the writer's index on ``start`` gives
without a sort; copies and sets (far fewer) are held whole, as ``p.gpu``, and merged in. Each
chunk is the frame activity.load would have made of those rows, column for column: prepared
(kind, direction, memory kinds, sites, duration) and joined to its launch calls. Concatenated,
the chunks are the in-memory ``p.gpu`` row for row, in its order: ops sorted by start, kernels
before copies at one start (the in-memory frame is kernels then copies, stably sorted).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd

from ..errors import RocpdError
from ..io.connection import FileHandle
from ..io.filters import name_mask
from ..progress import Bar, active
from .ahead import ahead
from .gpuload import COLUMNS, _names, same, symbols
from .gpuprep import _prepare_gpu, join_launches

CHUNK = 200_000  # kernels per chunk: ~60 MB of frame while it is swept

# A chunk is one row of SQLite's making: each column of the next CHUNK kernels after the last one
# read (by start, then id: the index on start seeks there) as one text, which numpy parses in C;
# a row of Python objects per kernel costs ~2.5 times as much. group_concat skips NULLs, so
# every column is given a value: 0 for a missing number (what the preparation makes of NaN),
# -1 for a missing symbol ("(unknown)"), "" for a line (no line, as NULL and "{}" are).
_KERNELS = """
SELECT COUNT(*), {ints}, group_concat(line_info, char(0)) FROM (
  SELECT * FROM (
    SELECT K.id, K.guid, K.pid, K.tid, K.agent_id AS agent, K.stream_id AS stream, K.start,
           K."end", K.kernel_id AS name_id, E.stack_id AS corr,
           COALESCE(NULLIF({line_info}, '{{}}'), '') AS line_info
    FROM rocpd_kernel_dispatch K
    LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
  ) WHERE ({where}) AND guid = ? AND start >= ? AND (start > ? OR id > ?)
  ORDER BY start, id LIMIT {chunk}
)
"""
# Without an index on start, the chunks above would each scan and sort the table: one sorted
# query instead, its rows read a chunk at a time (SQLite's sorter spills to disk, not to Python).
_SORTED = """
SELECT {ints}, line_info FROM (
  SELECT K.id, K.guid, K.pid, K.tid, K.agent_id AS agent, K.stream_id AS stream, K.start,
         K."end", K.kernel_id AS name_id, E.stack_id AS corr,
         COALESCE(NULLIF({line_info}, '{{}}'), '') AS line_info
  FROM rocpd_kernel_dispatch K
  LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
) WHERE ({where}) AND guid = ? ORDER BY start, id
"""
_INTS = ["pid", "tid", "agent", "stream", "start", "end", "name_id", "corr", "id"]
_NULL = {"name_id": -1}
_FIRST = -(1 << 62)  # before any start


def stored_kernels(conn, guid: str, above: int | None = None) -> int:
    """Kernel rows of part ``guid`` before any filter (what decides whether it is streamed),
    counted no further than ``above`` + 1 where given (a whole count of 10M rows takes ~2 s)."""
    if above is None:
        return int(conn.execute("SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE guid = ?",
                                (guid,)).fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM (SELECT 1 FROM rocpd_kernel_dispatch"
                            " WHERE guid = ? LIMIT ?)", (guid, above + 1)).fetchone()[0])


class GpuStream:
    """The GPU ops of one database part under the analysis's filter, as prepared frames."""

    def __init__(self, conn, where: str, params: list, guid: str, line_info: str, flt, comm_re):
        self.conn, self.where, self.params, self.guid = conn, where, params, guid
        self.line_info, self.flt, self.comm_re = line_info, flt, comm_re
        self.copies = None  # the prepared, joined copies (p.gpu), set by the loader
        self.index = None  # activity.launch_index of the process's API calls
        self._symbols = None  # kernel symbol id -> name
        self._stored = None  # kernel rows of the part, a progress bar's total

    def _columns(self, chunk: int):
        """(int64 columns, lines) of the next ``chunk`` kernels at a time, in (start, id) order."""
        ints = [f"CAST(COALESCE({_quoted(c)}, {_NULL.get(c, 0)}) AS INTEGER)" for c in _INTS]
        keyset = _KERNELS.format(ints=", ".join(f"group_concat({x})" for x in ints),
                                 where=self.where, line_info=self.line_info, chunk=chunk)
        args = [*self.params, self.guid, _FIRST, _FIRST, _FIRST]
        plan = " ".join(r[-1] for r in self.conn.execute("EXPLAIN QUERY PLAN " + keyset, args))
        if "(start>?)" not in plan:  # no index on start (another writer): one sort, not one a chunk
            yield from self._sorted(", ".join(ints), chunk)
            return
        handle = self._reader()
        if handle is None:  # read in place
            yield from self._keyset(keyset, self.conn)
            return
        # The next chunk read while this one is swept, on a connection of the reader's own (one
        # connection shared by two threads can deadlock in Python's sqlite3 module).
        yield from ahead(self._keyset_of(keyset, handle))

    def _reader(self):
        """A connection of the same file with the same views, or None: a database in memory,
        a file that cannot be opened again, views this connection redefined (a time window
        applied in Python narrows its kernels' view)."""
        path = _file_of(self.conn)
        if path is None:
            return None
        try:
            handle = FileHandle(path)
        except (RocpdError, OSError, sqlite3.Error):
            return None
        if _views(handle.conn) != _views(self.conn):
            handle.close()
            return None
        return handle

    def _keyset_of(self, keyset: str, handle):
        try:
            yield from self._keyset(keyset, handle.conn)
        finally:
            handle.close()

    def _keyset(self, keyset: str, conn):
        last = (_FIRST, _FIRST)
        while True:
            row = conn.execute(keyset, [*self.params, self.guid, last[0], last[0], last[1]]
                                    ).fetchone()
            n = row[0]
            if not n:
                return
            cols = {c: np.fromstring(text, dtype=np.int64, sep=",")
                    for c, text in zip(_INTS, row[1:-1], strict=True)}
            lines = row[-1].split("\x00")
            del row
            if any(len(v) != n for v in cols.values()) or len(lines) != n:
                raise RocpdError("a kernel row that is not integers where the schema has them")
            # The rows come in the subquery's order; were they not, they are put in it (and the
            # next chunk starts after the greatest).
            order = np.lexsort((cols["id"], cols["start"]))
            if (order[1:] < order[:-1]).any():
                cols = {c: v[order] for c, v in cols.items()}
                lines = [lines[i] for i in order]
            last = (int(cols["start"][-1]), int(cols["id"][-1]))
            yield cols, lines

    def _sorted(self, ints: str, chunk: int):
        sql = _SORTED.format(ints=ints, where=self.where, line_info=self.line_info)
        cur = self.conn.execute(sql, [*self.params, self.guid])
        while rows := cur.fetchmany(chunk):
            values = list(zip(*rows, strict=True))
            del rows
            yield ({c: np.array(v, dtype=np.int64) for c, v in zip(_INTS, values[:-1], strict=True)},
                   list(values[-1]))

    def _kernel_frames(self, chunk: int, bar=None):
        done = 0
        for cols, lines in self._columns(chunk):
            n = len(lines)
            if bar is not None:
                done += n
                bar.tick(done)
            data = {c: cols[c] for c in ("pid", "tid", "agent", "stream", "start", "end", "corr")}
            data["line_info"] = pd.Series([v or None for v in lines], dtype=object)
            if self._symbols is None:  # read once
                self._symbols = symbols(self.conn, self.guid)
            data["name"] = pd.Series(_names(self.conn, self.guid, cols["name_id"], self._symbols),
                                     dtype=object)
            data["guid"] = pd.Series(same(n, self.guid), dtype=object)
            data["op"] = pd.Series(same(n, "kernel"), dtype=object)
            for c in ("bytes", "extdata", "src_agent", "dst_agent"):
                data[c] = pd.Series(same(n, None), dtype=object)
            del cols, lines
            k = pd.DataFrame(data, columns=COLUMNS, copy=False)
            if self.flt is not None and (self.flt.include or self.flt.exclude):
                k = k[name_mask(k["name"], self.flt).to_numpy()].reset_index(drop=True)
            yield k

    def frames(self, chunk: int | None = None, label: str | None = None):
        """Prepared frames of at most ``chunk`` kernels (default CHUNK, read at the call) and
        the copies among them, in order; ``label``: a progress bar's, over the kernels read."""
        chunk = CHUNK if chunk is None else chunk
        bar = None
        if label and active():
            if self._stored is None:  # counted once, where a bar is drawn
                self._stored = stored_kernels(self.conn, self.guid)
            bar = Bar(self._stored, label)
        try:
            yield from self._frames(chunk, bar)
        finally:
            if bar is not None:
                bar.close()

    def _frames(self, chunk: int, bar):
        copies = self.copies if self.copies is not None else pd.DataFrame()
        c_start = copies["start"].to_numpy() if len(copies) else np.zeros(0, dtype=np.int64)
        ci = 0
        for k in self._kernel_frames(chunk, bar):
            if k.empty:
                continue
            k = _prepare_gpu(k, self.comm_re)
            join_launches(k, self.index)
            # Copies before the chunk's last start; one at that start waits for the next chunk,
            # whose kernels at that start come first.
            cj = int(np.searchsorted(c_start, int(k["start"].iloc[-1]), side="left"))
            yield _merged(k, copies.iloc[ci:cj]) if cj > ci else k
            ci = cj
        if ci < len(copies):
            yield copies.iloc[ci:].reset_index(drop=True)


def _file_of(conn) -> str | None:
    """The file of ``conn``'s main database, or None (in memory)."""
    for _seq, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or None
    return None


def _views(conn) -> list:
    """The TEMP views the kernels' query reads, as defined on ``conn``."""
    return conn.execute("SELECT name, sql FROM sqlite_temp_master WHERE type = 'view'"
                        " AND name IN ('rocpd_kernel_dispatch', 'rocpd_event') ORDER BY name"
                        ).fetchall()


def _quoted(column: str) -> str:
    return '"end"' if column == "end" else column


def _merged(k, c):
    """Kernels ``k`` and copies ``c`` (each sorted by start) as one frame sorted by start,
    kernels first at one start."""
    both = pd.concat([k, c.reindex(columns=k.columns)], ignore_index=True)
    order = np.argsort(both["start"].to_numpy(), kind="stable")
    return both.take(order).reset_index(drop=True)
