"""The kernels of a Perfetto trace (rocpd.export.perfetto) streamed from SQLite instead of held,
in two passes: the first (over SQLite) learns the stream tracks in order of first appearance (their
descriptors come before any event), checks that each stream's kernels follow one another (one
lane: no "(overlap N)" track) and which kernels end a flow, and spills each kernel's fields to a
temporary file (56 bytes a kernel, on disk); the second (over that file) makes each kernel's begin
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

import tempfile
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
        self.count = self.chunks = 0
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
        the stack ids of the part's API calls, which a kernel's may match (a flow). Each
        kernel's begin's fields go to a temporary file, read back by :meth:`windows`."""
        self.out_stacks = np.unique(np.asarray(out_stacks, dtype=np.int64))
        self.kernel_code = text.code("kernel")
        prev: dict = {}  # track uuid -> (start, end) of its latest kernel
        count: dict = {}  # track uuid -> its kernels so far
        found = []  # stack ids of kernels that end a flow
        self.spill = tempfile.TemporaryFile(prefix="rocpd-perfetto-")
        for cols in self._chunks():
            keys, first, inv = self._keys(cols)
            for j in np.argsort(first, kind="stable").tolist():
                key = keys[j]
                if key not in self.uuid:
                    pid, agent, sid = key
                    label = self.labels.get(agent, act._agent_label(None, None))
                    u = tracks.get(("s", self.guid, pid, label, sid), gpu(self.guid, pid, label),
                                   name=self.streams.get(sid) or f"Stream {sid}")
                    if u in self.rank:
                        raise Held  # two GPUs of one label on one track: their kernels interleave
                    if u not in per_track:
                        per_track[u] = array("q")
                    self.uuid[key] = u
                    self.rank[u] = list(per_track).index(u)
            track = np.array([self.uuid[k] for k in keys], dtype=np.int64)
            syms, sym_inv = np.unique(cols["sym"], return_inverse=True)
            for x in syms.tolist():
                if x not in self.names:
                    self.names[x] = text.code(self.symbols.get(x) or "(unknown)")
            name = np.array([self.names[x] for x in syms.tolist()], dtype=np.int64)[sym_inv]
            order = np.argsort(inv, kind="stable")
            g, st, en = inv[order], cols["start"][order], cols["end"][order]
            if (en < st).any():
                raise Held
            head = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
            size = np.diff(np.r_[head, len(g)])
            for h in head.tolist():  # the stream's kernel before this chunk's first
                p = prev.get(int(track[g[h]]))
                if p is not None and not (st[h] > p[0] and st[h] >= p[1]):
                    raise Held
            inner = g[1:] == g[:-1]
            if (inner & ~((st[1:] > st[:-1]) & (st[1:] >= en[:-1]))).any():
                raise Held
            before = np.array([count.get(int(track[x]), 0) for x in g[head].tolist()],
                              dtype=np.int64)
            nth = np.empty(len(g), dtype=np.int64)
            nth[order] = np.arange(len(g)) + np.repeat(before - head, size)
            for x, h, c in zip(g[head].tolist(), head.tolist(), size.tolist(), strict=True):
                u = int(track[x])
                prev[u] = (int(st[h + c - 1]), int(en[h + c - 1]))
                count[u] = count.get(u, 0) + c
            self.count += len(g)
            stack = cols["stack"]
            ends = (stack != 0) & np.isin(stack, self.out_stacks)
            found.append(np.unique(stack[ends]))
            self.chunks += 1
            np.save(self.spill, np.stack([cols["start"], cols["end"], track[inv], name, stack,
                                          ends.astype(np.int64), nth]))
        self.linked = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def windows(self, part: int):
        """Per chunk: (the events' fields final before ``limit``, with their tracks' places and
        their own on the track, limit); the last window's limit None. Fields as
        _perfetto_packets.Encoder.pack takes them."""
        rank = np.zeros(max(self.rank, default=0) + 1, dtype=np.int64)
        for u, r in self.rank.items():
            rank[u] = r
        self.spill.seek(0)
        wait = None
        for _ in range(self.chunks):
            start, end, track, name, stack, flow, nth = np.load(self.spill)
            n = len(start)
            ev = {"ts": np.concatenate([start, end]),
                  "track": np.concatenate([track, track]),
                  "kind": np.repeat(np.array([1, 2], dtype=np.int64), n),
                  "name": np.concatenate([name, np.zeros(n, np.int64)]),
                  "cat": np.repeat(np.array([self.kernel_code, 0], dtype=np.int64), n),
                  "stack": np.concatenate([stack, np.zeros(n, np.int64)]),
                  "flow": np.concatenate([flow * 2, np.zeros(n, np.int64)]).astype(np.int8),
                  "part": np.full(2 * n, part, dtype=np.int32),
                  "value": np.zeros(2 * n),
                  "rank": rank[np.concatenate([track, track])],
                  "pos": np.concatenate([2 * nth, 2 * nth + 1])}
            if wait is not None:
                ev = {k: np.concatenate([wait[k], v]) for k, v in ev.items()}
            limit = int(start[-1])
            now = ev["ts"] < limit
            yield {k: v[now] for k, v in ev.items()}, limit
            wait = {k: v[~now] for k, v in ev.items()}
        self.spill.close()
        if wait is not None:
            yield wait, None
