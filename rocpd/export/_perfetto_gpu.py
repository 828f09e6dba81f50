"""The kernels of a Perfetto trace (rocpd.export.perfetto) streamed from SQLite in two passes
instead of held: the first learns the stream tracks in order of first appearance (their
descriptors come before any event), checks that each stream's kernels follow one another (one
lane: no "(overlap N)" track) and which kernels end a flow; the second makes each kernel's begin
and end, a chunk at a time in order of start, and hands them to the writer as events final up to
the chunk's last start (an end after it waits for the next chunk, one per stream).

The rows come as the held writer reads them (rocpd.export._activity.gpu_activity: SQLite's merge
of the index scans on start, ties by id) and each stream's events are the ones its lane sweep
makes of slices that follow one another, so the trace is the same, byte for byte. Where that
cannot be shown up front or is not so (several files or parts, copies, kernel-name filters, queues
as lanes, a plan without the index, a NULL column, slices that overlap on a stream), the writer
holds the records instead (:class:`Held`).
"""

from __future__ import annotations

from array import array

import numpy as np

from . import _activity as act
from . import agent_column

CHUNK = 1 << 16  # kernels a chunk: a few MB of arrays
_FIRST = -(1 << 62)
_COLS = ["id", "pid", "agent", "stream_id", "sym", "stack", "start", "end"]
_KERNELS = """
SELECT COUNT(*), {cols} FROM (
  SELECT * FROM (
    SELECT K.id, K.guid, COALESCE(P.pid, K.pid) AS pid, COALESCE(K.agent_id, -1) AS agent,
           K.stream_id, COALESCE(K.kernel_id, -1) AS sym, COALESCE(E.stack_id, 0) AS stack,
           K.start, K."end"
    FROM rocpd_kernel_dispatch K
    LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
    LEFT JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid
  ) WHERE ({where}) AND guid = ? AND start >= ? AND (start > ? OR id > ?)
  ORDER BY start, id LIMIT {n}
)
"""


class Held(Exception):
    """The trace's kernels are to be held (read as rows), not streamed."""


def open_stream(db, where: str, params: list, flt, agent_index: str, by_queue: bool):
    """A :class:`GpuStream` of ``db``'s kernels, or None where they are to be held."""
    sources = db.sources()
    if by_queue or flt.include or flt.exclude or len(sources) != 1 or len(sources[0].parts) != 1:
        return None
    src = sources[0]
    conn, guid = src.conn, src.parts[0].guid
    if conn.execute(f"SELECT 1 FROM memory_copies WHERE {where} LIMIT 1", params).fetchone():
        return None
    k_index = agent_column(agent_index)
    held = act._GPU_SQL.format(w=where, k_lane="stream_id, stream", c_lane="stream_id, stream_name",
                               k_index=k_index, src_index=agent_column(agent_index, "src_"),
                               dst_index=agent_column(agent_index, "dst_"))
    plan = [r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + held, [*params, *params])]
    if plan[0] != "MERGE (UNION ALL)" or any("TEMP B-TREE" in p for p in plan) or \
            not any("rocpd_kernel_dispatch_start" in p for p in plan):
        return None
    sql = _KERNELS.format(cols=", ".join(f'group_concat({c if c != "end" else chr(34) + c + chr(34)})'
                                         for c in _COLS), where=where, n=CHUNK)
    plan = " ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql,
                                                [*params, guid, _FIRST, _FIRST, _FIRST]))
    if "(start>?)" not in plan:
        return None
    return GpuStream(conn, guid, sql, params, agent_index)


class GpuStream:
    def __init__(self, conn, guid, sql, params, agent_index):
        self.conn, self.guid, self.sql, self.params = conn, guid, sql, params
        col = agent_column(agent_index).replace("agent_", "").replace("abs_", "absolute_") \
            .replace("log_", "logical_")
        self.labels = {a: act._agent_label(t, i) for a, t, i in conn.execute(
            f"SELECT id, type, {col} FROM rocpd_info_agent WHERE guid = ?", (guid,))}
        self.streams = {i: n for i, n in conn.execute(
            "SELECT id, name FROM rocpd_info_stream WHERE guid = ?", (guid,))}
        self.symbols = {i: n for i, n in conn.execute(
            "SELECT id, COALESCE(display_name, kernel_name) FROM rocpd_info_kernel_symbol"
            " WHERE guid = ?", (guid,))}
        self.uuid: dict = {}  # (pid, agent, stream id) -> track uuid
        self.rank: dict = {}  # track uuid -> its place among the tracks with slices
        self.names: dict = {}  # symbol id -> text code
        self.count = 0
        self.out_stacks = np.zeros(0, dtype=np.int64)  # the part's API calls' stack ids

    def _chunks(self):
        last = (_FIRST, _FIRST)
        while True:
            row = self.conn.execute(self.sql, [*self.params, self.guid, last[0], last[0],
                                               last[1]]).fetchone()
            n = row[0]
            if not n:
                return
            cols = {c: np.fromstring(t or "", dtype=np.int64, sep=",")
                    for c, t in zip(_COLS, row[1:], strict=True)}
            if any(len(v) != n for v in cols.values()):
                raise Held  # a NULL (or not an integer) the held writer would draw as read
            if (np.diff(cols["start"]) < 0).any() or \
                    ((np.diff(cols["start"]) == 0) & (np.diff(cols["id"]) <= 0)).any():
                raise Held
            last = (int(cols["start"][-1]), int(cols["id"][-1]))
            yield cols

    def _keys(self, cols):
        """Each row's stream key's number in ``np.unique`` order and the keys, as tuples."""
        k = np.stack([cols["pid"], cols["agent"], cols["stream_id"]], axis=1)
        u, first, inv = np.unique(k, axis=0, return_index=True, return_inverse=True)
        return [tuple(r) for r in u.tolist()], first, inv.reshape(-1)

    def first_pass(self, tracks, gpu, per_track, text, out_stacks) -> None:
        """Register the stream tracks (as the held writer's first slice on each would), the
        names' text codes; check each stream's kernels follow one another; ``out_stacks``:
        the stack ids of the part's API calls, which a kernel's may match (a flow)."""
        self.out_stacks = np.unique(np.asarray(out_stacks, dtype=np.int64))
        self.kernel_code = text.code("kernel")
        prev: dict = {}  # key -> (start, end) of its latest kernel
        found = []  # stack ids of kernels that end a flow
        for cols in self._chunks():
            keys, first, inv = self._keys(cols)
            for j in np.argsort(first, kind="stable").tolist():
                key = keys[j]
                if key not in self.uuid:
                    pid, agent, sid = key
                    label = self.labels.get(agent, act._agent_label(None, None))
                    u = tracks.get(("s", self.guid, pid, label, sid), gpu(self.guid, pid, label),
                                   name=self.streams.get(sid) or f"Stream {sid}")
                    if u not in per_track:
                        per_track[u] = array("q")
                    self.uuid[key] = u
            for s in np.unique(cols["sym"]).tolist():
                if s not in self.names:
                    self.names[s] = text.code(self.symbols.get(s) or "(unknown)")
            order = np.argsort(inv, kind="stable")
            g, st, en = inv[order], cols["start"][order], cols["end"][order]
            if (en < st).any():
                raise Held
            head = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
            for h in head.tolist():  # the stream's kernel before this chunk's first
                p = prev.get(keys[g[h]])
                if p is not None and not (st[h] > p[0] and st[h] >= p[1]):
                    raise Held
            inner = g[1:] == g[:-1]
            if (inner & ~((st[1:] > st[:-1]) & (st[1:] >= en[:-1]))).any():
                raise Held
            tail = np.r_[head[1:] - 1, len(g) - 1]
            for t in tail.tolist():
                prev[keys[g[t]]] = (int(st[t]), int(en[t]))
            self.count += len(g)
            stack = cols["stack"]
            found.append(np.unique(stack[(stack != 0) & np.isin(stack, self.out_stacks)]))
        self.linked = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
        self.rank = {u: r for r, u in enumerate(per_track)}

    def windows(self, part: int):
        """Per chunk: (the events' fields final before ``limit``, their ranks and positions,
        limit); the last window's limit None. Fields as _perfetto_packets.Encoder.pack takes."""
        count: dict = {}  # track uuid -> kernels written
        wait = None
        for cols in self._chunks():
            keys, _first, inv = self._keys(cols)
            track = np.array([self.uuid[k] for k in keys], dtype=np.int64)[inv]
            rank = np.array([self.rank[self.uuid[k]] for k in keys], dtype=np.int64)[inv]
            order = np.argsort(inv, kind="stable")
            nth = np.empty(len(inv), dtype=np.int64)
            g = inv[order]
            head = np.r_[True, g[1:] != g[:-1]]
            starts = np.flatnonzero(head)
            before = np.array([count.get(self.uuid[keys[x]], 0) for x in g[starts].tolist()],
                              dtype=np.int64)
            nth[order] = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)])) \
                + np.repeat(before, np.diff(np.r_[starts, len(g)]))
            for x, b, c in zip(g[starts].tolist(), before.tolist(),
                               np.diff(np.r_[starts, len(g)]).tolist(), strict=True):
                count[self.uuid[keys[x]]] = b + c
            stack = cols["stack"]
            flow = np.where((stack != 0) & np.isin(stack, self.out_stacks), 2, 0).astype(np.int8)
            name = np.array([self.names[s] for s in cols["sym"].tolist()], dtype=np.int64)
            n = len(inv)
            ev = {"ts": np.concatenate([cols["start"], cols["end"]]),
                  "track": np.concatenate([track, track]),
                  "kind": np.repeat(np.array([1, 2], dtype=np.int64), n),
                  "name": np.concatenate([name, np.zeros(n, np.int64)]),
                  "cat": np.repeat(np.array([self.kernel_code, 0], dtype=np.int64), n),
                  "stack": np.concatenate([stack, np.zeros(n, np.int64)]),
                  "flow": np.concatenate([flow, np.zeros(n, np.int8)]),
                  "part": np.full(2 * n, part, dtype=np.int32),
                  "value": np.zeros(2 * n),
                  "rank": np.concatenate([rank, rank]),
                  "pos": np.concatenate([2 * nth, 2 * nth + 1])}
            if wait is not None:
                ev = {k: np.concatenate([wait[k], v]) for k, v in ev.items()}
            limit = int(cols["start"][-1])
            now = ev["ts"] < limit
            yield {k: v[now] for k, v in ev.items()}, limit
            wait = {k: v[~now] for k, v in ev.items()}
        if wait is not None:
            yield wait, None
