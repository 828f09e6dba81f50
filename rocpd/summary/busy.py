"""GPU busy per agent (ROCm's busy view): the sum of kernel and copy durations per (part, agent),
and the first start and last end, a copy counted under its destination agent.

SQLite's ``GROUP BY guid, agent_id`` sorts every row through a temporary b-tree (10M kernels:
~14 s); here each rowid range of each part's table is read by one aggregate query that streams
the agent, start and end columns out as texts (``group_concat``: one result row, no Python
object per row) and numpy sums them per agent. A range whose texts cannot be parsed whole (a
NULL, a value not an integer) sends the file to the GROUP BY query, which gives the same rows.
"""

from __future__ import annotations

import sqlite3

import numpy as np

# Integer texts parsed whole or not at all; rowid ranges as the kernel summary walks them.
from .fastagg import _parse, _Unreadable, rowid_ranges, rowid_span

_RANGE = 1 << 19  # rows of one query: ~25 MB of text while it is parsed
_NO_AGENT = -(1 << 62)  # a NULL agent id, as group_concat would skip it

# The union keeps the tables' column names: a time window's condition names "end" (renamed, a
# double-quoted name SQLite cannot find is read as the text 'end').
_GROUPED = ('SELECT guid, agent_id, SUM(d), MIN(start), MAX("end") FROM ('
            ' SELECT guid, pid, agent_id, start, "end", "end" - start AS d'
            ' FROM rocpd_kernel_dispatch'
            ' UNION ALL SELECT guid, pid, dst_agent_id, start, "end", "end" - start'
            ' FROM rocpd_memory_copy) WHERE {where} GROUP BY guid, agent_id')

# One rowid range of one part's table, in the union's columns so that the filter reads the same.
_RANGED = ('SELECT count(*), group_concat(COALESCE(agent_id, {none})), group_concat(start),'
           ' group_concat("end") FROM (SELECT guid, pid, {agent} AS agent_id, start, "end"'
           ' FROM {table} WHERE id >= ? AND id < ?) WHERE {where}')


def _ranged(src, where: str, params: list) -> dict:
    """{(guid, agent id): [duration sum, first start, last end]} of one file, a range at a time."""
    acc: dict = {}
    for kind, agent in (("kernel_dispatch", "agent_id"), ("memory_copy", "dst_agent_id")):
        for part, table in src.tables(kind):
            if not {"id", "start", "end", agent} <= set(part.columns[kind]):
                raise _Unreadable()
            lo, hi = rowid_span(src.conn, table)
            if lo is None:
                continue
            sql = _RANGED.format(none=_NO_AGENT, agent=agent, table=table, where=where)
            for a, b in rowid_ranges(lo, hi, _RANGE):
                n, agents, starts, ends = src.conn.execute(sql, [a, b, *params]).fetchone()
                if not n:
                    continue
                ag, s, e = _parse(agents, n), _parse(starts, n), _parse(ends, n)
                for value in np.unique(ag).tolist():
                    m = ag == value
                    key = (part.guid, None if value == _NO_AGENT else value)
                    got = (int((e[m] - s[m]).sum()), int(s[m].min()), int(e[m].max()))
                    old = acc.get(key)
                    acc[key] = list(got) if old is None else [
                        old[0] + got[0], min(old[1], got[1]), max(old[2], got[2])]
    return acc


def file_busy(src, where: str, params: list) -> list[tuple]:
    """(guid, pid, agent id, absolute index, type, GPU time, first start, last end) per agent of
    one file. Runs wherever ``db.map`` runs it (locally, or on a Dask worker)."""
    agents = {(g, i): (t, a, p) for g, i, t, a, p in src.conn.execute(
        "SELECT guid, id, type, absolute_index, pid FROM rocpd_info_agent")}
    try:
        found = [(g, ag, *v) for (g, ag), v in _ranged(src, where, params).items()]
        found.sort(key=lambda r: (r[0], r[1] is not None, r[1] or 0))  # GROUP BY's order
    except (_Unreadable, sqlite3.OperationalError):  # a column or value the ranges cannot read
        found = src.conn.execute(_GROUPED.format(where=where), params).fetchall()
    rows = []
    for guid, agent, gpu, lo, hi in found:
        t, a, p = agents.get((guid, agent), (None, None, None))
        rows.append((guid, p, agent, a, t, gpu, lo, hi))
    return rows
