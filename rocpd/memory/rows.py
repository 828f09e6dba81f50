"""Reading GPU memory records from a database: every allocation row of one process in time
order (a cursor, never the whole table in Python), the Python line of each allocating call
site, and the capture's rocprof.memory.* metadata.

Which rows count (the rocpd schema's rocpd_memory_allocate, see docs/memory.md):
- category ``TORCH_ALLOCATOR_BLOCK`` (level 'VIRTUAL'): a block of PyTorch's caching allocator,
  ALLOC when handed out, FREE when torch's allocated bytes drop: "allocated";
- category ``TORCH_ALLOCATOR_SEGMENT`` (level 'VIRTUAL'): a segment the allocator reserved
  (or mapped, for expandable segments), FREE when released: "reserved";
- category ``TORCH_ALLOCATOR_OOM``: one row per out-of-memory, size = the failed request,
  the row's extdata {"device_free": bytes} (the event's, where a writer put it there);
- level 'REAL' of any category (the runtime's cudaMalloc, cudaMallocAsync, NCCL's buffers,
  the allocator's own segments seen from the driver): "held at the driver".
Other rows (ROCm's VIRTUAL address reservations, SCRATCH) are left out.

A row's time: an allocation counts from its end (when the call returned), a free from its start
(as rocpd.export draws them); the allocator's rows have start = end.
"""

from __future__ import annotations

import json

from .. import _schema
from ..io.filters import Filter, resolve

BLOCK = "TORCH_ALLOCATOR_BLOCK"
SEGMENT = "TORCH_ALLOCATOR_SEGMENT"
OOM = "TORCH_ALLOCATOR_OOM"
ALLOCATOR = (BLOCK, SEGMENT, OOM)
SOURCE_TAG = "rocprof.memory.source"
EVENTS_TAG = "rocprof.memory.allocator_events"
DROPPED_TAG = "rocprof.memory.dropped"

# Row kinds as the replay reads them.
K_BLOCK, K_SEGMENT, K_OOM, K_REAL = 0, 1, 2, 3
_KIND_SQL = (f"CASE WHEN C.string = '{BLOCK}' THEN {K_BLOCK} WHEN C.string = '{SEGMENT}' THEN"
             f" {K_SEGMENT} WHEN C.string = '{OOM}' THEN {K_OOM} WHEN M.level = 'REAL' THEN"
             f" {K_REAL} END")

_ROWS_SQL = """
SELECT * FROM (
  SELECT M.guid AS guid, M.pid AS pid, M.start AS start, M."end" AS "end",
         CASE WHEN M.type = 'FREE' THEN M.start ELSE M."end" END AS t, {kind} AS kind,
         M.type = 'FREE' AS is_free, M.agent_id AS agent, M.address AS address,
         COALESCE(M.size, 0) AS size, E.call_stack AS cs, E.line_info AS li,
         CASE WHEN C.string = '{oom}' THEN COALESCE(NULLIF(M.extdata, '{{}}'), E.extdata) END
           AS extdata, M.event_id AS event, M.id AS id
  FROM rocpd_memory_allocate M
  LEFT JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid
  LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid
  WHERE M.guid = ?
) WHERE kind IS NOT NULL AND {where}
ORDER BY t, id
"""

_BOUNDS_SQL = """
SELECT MIN(t), MAX(t), COUNT(*), SUM(kind = {block}), SUM(kind = {real}) FROM (
  SELECT M.guid AS guid, M.pid AS pid, M.start AS start, M."end" AS "end",
         CASE WHEN M.type = 'FREE' THEN M.start ELSE M."end" END AS t, {kind} AS kind
  FROM rocpd_memory_allocate M
  LEFT JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid
  LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid
  WHERE M.guid = ?
) WHERE kind IS NOT NULL AND {where}
"""


class Part:
    """One process's memory rows: its source connection, guid and the filter."""

    def __init__(self, conn, guid: str, where: str, params: list):
        self.conn, self.guid, self.where, self.params = conn, guid, where, params
        self.sites: dict[tuple, int] = {}     # (call_stack, line_info) text -> site index
        self.site_event: list[int] = []       # a row's event id per site index

    def bounds(self) -> tuple[int | None, int | None, int, int, int]:
        """(first time, last time, rows, block rows, REAL rows) of the counted rows."""
        sql = _BOUNDS_SQL.format(kind=_KIND_SQL, where=self.where, block=K_BLOCK, real=K_REAL)
        lo, hi, n, blocks, real = self.conn.execute(sql, [self.guid, *self.params]).fetchone()
        return lo, hi, int(n or 0), int(blocks or 0), int(real or 0)

    def rows(self):
        """(t, kind, is_free, agent, address, size, site, extdata) of every counted row, in time
        order; ``site``: an index into this part's sites (the same line, the same index)."""
        sql = _ROWS_SQL.format(kind=_KIND_SQL, oom=OOM, where=self.where)
        cur = self.conn.execute(sql, [self.guid, *self.params])
        sites = self.sites
        while chunk := cur.fetchmany(5000):
            for (_g, _p, _s, _e, t, kind, is_free, agent, address, size, cs, li, ext, event,
                 _id) in chunk:
                key = (cs, li)
                site = sites.get(key)
                if site is None:
                    site = sites[key] = len(self.site_event)
                    self.site_event.append(event)
                yield t, kind, bool(is_free), agent, address, int(size), site, ext

    def lines(self) -> list[tuple[str | None, str | None, list]]:
        """Per site index: (line_info JSON text, frames (innermost first) as dicts)."""
        out = []
        li_sql = _schema.line_info_sql("E")
        cs_sql = _schema.call_stack_sql("E")
        for event in self.site_event:
            row = self.conn.execute(f"SELECT {li_sql}, {cs_sql} FROM rocpd_event E WHERE E.id = ?"
                                    " AND E.guid = ?", (event, self.guid)).fetchone()
            li, cs = row if row else (None, None)
            out.append((li, _frames(cs)))
        return out


def _frames(text) -> list:
    if not text:
        return []
    try:
        v = json.loads(text)
    except ValueError:
        return []
    return [f for f in v if isinstance(f, dict)] if isinstance(v, list) else []


def parts(db, **filters) -> list[Part]:
    """A Part per process of ``db`` (a Connection) after the shared filters."""
    where, params = resolve(db, Filter.of(filters))
    return [Part(src.conn, part.guid, where, params) for src in db.sources() for part in src.parts]


def device_free(oom_json) -> int | None:
    """The driver's free bytes an OOM row's extdata JSON carries, None when absent."""
    try:
        v = json.loads(oom_json or "{}").get("device_free")
    except (ValueError, AttributeError):
        return None
    return int(v) if isinstance(v, (int, float)) else None


def metadata(db) -> dict[str, dict[str, str]]:
    """guid -> {tag: value} of the rocprof.memory.* metadata rows."""
    out: dict[str, dict[str, str]] = {}
    for guid, tag, value in db.metadata():
        if tag.startswith("rocprof.memory."):
            out.setdefault(guid, {})[tag] = value
    return out
