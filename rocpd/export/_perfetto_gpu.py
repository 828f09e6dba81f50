"""The kernels and copies of a Perfetto trace (rocpd.export.perfetto) streamed from SQLite
instead of held (copies, far fewer, are read whole and merged into the kernels' chunks), in two
passes. The first, over SQLite, learns the stream tracks in order of first appearance (their
descriptors come before any event), sweeps each track's slices into lanes (_perfetto_lanes: the
"(overlap N)" tracks, made by the writer where the held one makes them), finds which kernels end
a flow, and spills each begin and end with its place to a temporary file (~100 bytes an op, on
disk). The second, over that file, hands the writer a chunk's events at a time, final up to the
chunk's last start (later ends wait for the next chunk).

The rows come as the held writer reads them (rocpd.export._activity.gpu_activity: SQLite's merge
of the index scans on start, kernels first at one start, ties by id), and a track's slices at one
start are swept together (those at a chunk's last start wait for the next chunk), so the trace is
the same, byte for byte. Several files stream a file each (merged by _perfetto_merge). Where
that cannot be shown up front or is not so (a file of several parts, a plan without the indexes, a NULL column, a slice ending before it
starts), the writer holds the records instead (:class:`Held`).
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator

import numpy as np
import pandas as pd

from ..io.filters import name_mask
from ..progress import Bar
from . import _activity as act
from . import agent_column
from ._perfetto_lanes import Lanes

CHUNK = 1 << 16  # kernels a chunk: a few MB of arrays
_FIRST = -(1 << 62)
_COLS = ["id", "pid", "agent", "stream_id", "sym", "stack", "start", "end"]
_KERNELS = """
SELECT COUNT(*), {cols} FROM (
  SELECT * FROM (
    SELECT K.id, K.guid, COALESCE(P.pid, K.pid) AS pid, COALESCE(K.agent_id, -1) AS agent,
           K.{lane} AS stream_id, COALESCE(K.kernel_id, -1) AS sym, COALESCE(E.stack_id, 0) AS stack,
           K.start, K."end"
    FROM rocpd_kernel_dispatch K
    LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
    LEFT JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid
  ) WHERE ({where}) AND guid = ? AND start >= ? AND (start > ? OR id > ?)
  ORDER BY start, id LIMIT {n}
)
"""


# The copies as the held writer's query reads them (act._GPU_SQL's second half), in its order.
_COPIES = """
SELECT name, pid, CASE WHEN dst_agent_type = 'CPU' THEN src_agent_type ELSE dst_agent_type END,
       CASE WHEN dst_agent_type = 'CPU' THEN {src_index} ELSE {dst_index} END,
       {lane}, stack_id, start, "end" FROM memory_copies WHERE ({w}) AND guid = ?
ORDER BY start, id
"""


class Held(Exception):
    """The trace's kernels are to be held (read as rows), not streamed."""


def open_stream(src, where: str, params: list, flt, agent_index: str, by_queue: bool,
                files: int = 1):
    """A :class:`GpuStream` of the kernels of file ``src`` (a Source), or None where they are
    to be held; ``files``: how many are streamed together (each reads a share of CHUNK at a
    time, so that the windows waiting to be merged take what one file's would)."""
    if len(src.parts) != 1:
        return None
    conn, guid = src.conn, src.parts[0].guid
    copies = conn.execute(f"SELECT 1 FROM memory_copies WHERE {where} LIMIT 1", params).fetchone()
    k_index = agent_column(agent_index)
    lane = "queue_id" if by_queue else "stream_id"
    k_lane, c_lane = ("queue_id, queue", "queue_id, queue_name") if by_queue else \
        ("stream_id, stream", "stream_id, stream_name")
    held = act._GPU_SQL.format(w=where, k_lane=k_lane, c_lane=c_lane,
                               k_index=k_index, src_index=agent_column(agent_index, "src_"),
                               dst_index=agent_column(agent_index, "dst_"))
    plan = [r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + held, [*params, *params])]
    if plan[0] != "MERGE (UNION ALL)" or any("TEMP B-TREE" in p for p in plan) or \
            not any("rocpd_kernel_dispatch_start" in p for p in plan) or \
            (copies and not any("rocpd_memory_copy_start" in p for p in plan)):
        return None
    sql = _KERNELS.format(cols=", ".join(f'group_concat({c if c != "end" else chr(34) + c + chr(34)})'
                                         for c in _COLS), where=where, lane=lane,
                          n=max(1, CHUNK // max(files, 1)))
    plan = " ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql,
                                                [*params, guid, _FIRST, _FIRST, _FIRST]))
    if "(start>?)" not in plan:
        return None
    copy_sql = _COPIES.format(w=where, src_index=agent_column(agent_index, "src_"),
                              dst_index=agent_column(agent_index, "dst_"), lane=lane)
    return GpuStream(conn, guid, sql, copy_sql if copies else None, params, agent_index, flt,
                     by_queue)


def pages(conn, sql: str, params: list, guid, ints) -> Iterator[tuple]:
    """(rows, {column: int64 array}, the row's other columns) of each page of ``sql`` (its
    first column the page's row count, then each of ``ints`` as a comma-separated text), read
    after the last (start, id) of the page before. Held: a NULL or a non-integer among them, or
    rows out of (start, id) order (the held writer draws them as read)."""
    last = (_FIRST, _FIRST)
    while True:
        row = conn.execute(sql, [*params, guid, last[0], last[0], last[1]]).fetchone()
        n = row[0]
        if not n:
            return
        cols = {c: np.fromstring(t or "", dtype=np.int64, sep=",")
                for c, t in zip(ints, row[1:1 + len(ints)], strict=True)}
        if any(len(v) != n for v in cols.values()):
            raise Held
        if (np.diff(cols["start"]) < 0).any() or \
                ((np.diff(cols["start"]) == 0) & (np.diff(cols["id"]) <= 0)).any():
            raise Held
        last = (int(cols["start"][-1]), int(cols["id"][-1]))
        yield n, cols, row[1 + len(ints):]


class GpuStream:
    def __init__(self, conn, guid, sql, copy_sql, params, agent_index, flt, by_queue=False):
        self.conn, self.guid, self.sql, self.params = conn, guid, sql, params
        self.copy_sql, self.flt = copy_sql, flt
        self.lane = "Queue" if by_queue else "Stream"  # a track's name where its own is empty
        col = agent_column(agent_index).replace("agent_", "").replace("abs_", "absolute_") \
            .replace("log_", "logical_")
        self.labels = {a: act._agent_label(t, i) for a, t, i in conn.execute(
            f"SELECT id, type, {col} FROM rocpd_info_agent WHERE guid = ?", (guid,))}
        self.streams = {i: n for i, n in conn.execute(  # or the queues, as lanes
            f"SELECT id, name FROM rocpd_info_{'queue' if by_queue else 'stream'} WHERE guid = ?",
            (guid,))}
        self.symbols = {i: n for i, n in conn.execute(
            "SELECT id, COALESCE(display_name, kernel_name) FROM rocpd_info_kernel_symbol"
            " WHERE guid = ?", (guid,))}
        self.label_code: dict = {}  # GPU label -> its number in the keys
        self.agent_code = {a: self._label(x) for a, x in self.labels.items()}
        self.uuid: dict = {}  # (pid, label's number, stream id) -> track uuid
        self.rank: dict = {}  # track uuid -> its place among the tracks with slices
        self.overlap: dict = {}  # (track uuid, lane) -> its "(overlap N)" track, made by the writer
        self.names: dict = {}  # symbol id -> text code
        self.count = self.chunks = 0
        self.out_stacks = np.zeros(0, dtype=np.int64)  # the part's API calls' stack ids

    def _chunks(self):
        for _n, cols, _rest in pages(self.conn, self.sql, self.params, self.guid, _COLS):
            yield cols

    def _label(self, label: str) -> int:
        if label not in self.label_code:
            self.label_code[label] = len(self.label_code)
        return self.label_code[label]

    def _copies(self, text, copy_code: int) -> dict:
        """The copies (held: far fewer than kernels) as columns, in the held query's order."""
        rows = self.conn.execute(self.copy_sql, [*self.params, self.guid]).fetchall()
        if any(r[1] is None or r[4] is None or r[6] is None or r[7] is None for r in rows):
            raise Held  # a NULL the held writer would draw as read
        cols = list(zip(*rows, strict=True)) if rows else [()] * 8
        out = {c: np.array(v, dtype=np.int64) for c, v in
               (("pid", cols[1]), ("stream_id", cols[4]), ("start", cols[6]), ("end", cols[7]))}
        out["stack"] = np.array([x or 0 for x in cols[5]], dtype=np.int64)
        out["label"] = np.array([self._label(act._agent_label(t, i))
                                 for t, i in zip(cols[2], cols[3], strict=True)], dtype=np.int64)
        out["name"] = np.array([text.code(x or "(unknown)") for x in cols[0]], dtype=np.int64)
        out["cat"] = np.full(len(rows), copy_code, dtype=np.int64)
        return out

    def _ops(self, text):
        """Kernels (and copies among them) as columns, a chunk at a time, in the held query's
        order: by start, kernels before copies at one start, else by id."""
        unknown = self._label(act._agent_label(None, None))
        copies = self._copies(text, text.code("copy")) if self.copy_sql else None
        ci = 0
        for cols in self._chunks():
            syms, inv = np.unique(cols["sym"], return_inverse=True)
            for x in syms.tolist():
                if x not in self.names:
                    name = self.symbols.get(x)
                    keep = True
                    if self.flt.include or self.flt.exclude:
                        keep = bool(name_mask(pd.Series([name]), self.flt).iloc[0])
                    self.names[x] = text.code(name or "(unknown)") if keep else -1
            name = np.array([self.names[x] for x in syms.tolist()], dtype=np.int64)[inv.reshape(-1)]
            ops = {"pid": cols["pid"], "stream_id": cols["stream_id"], "name": name,
                   "cat": np.full(len(name), self.kernel_code, dtype=np.int64),
                   "stack": cols["stack"], "start": cols["start"], "end": cols["end"]}
            agents, a_inv = np.unique(cols["agent"], return_inverse=True)
            ops["label"] = np.array([self.agent_code.get(a, unknown) for a in agents.tolist()],
                                    dtype=np.int64)[a_inv.reshape(-1)]
            if (name < 0).any():  # left out by the kernel-name filters
                ops = {c: v[name >= 0] for c, v in ops.items()}
            if copies is not None:
                # Copies before the chunk's last start; one at it waits for the next chunk,
                # whose kernels at that start come first.
                cj = int(np.searchsorted(copies["start"], int(cols["start"][-1]), side="left"))
                if cj > ci:
                    ops = _merged(ops, {c: v[ci:cj] for c, v in copies.items()})
                    ci = cj
            if len(ops["start"]):
                yield ops
        if copies is not None and ci < len(copies["start"]):
            yield {c: v[ci:] for c, v in copies.items()}

    def _keys(self, ops):
        """Each op's stream key's number in ``np.unique`` order and the keys, as tuples."""
        k = np.stack([ops["pid"], ops["label"], ops["stream_id"]], axis=1)
        u, first, inv = np.unique(k, axis=0, return_index=True, return_inverse=True)
        return [tuple(r) for r in u.tolist()], first, inv.reshape(-1)

    def first_pass(self, tracks, gpu, per_track, text, out_stacks) -> None:
        """Register the stream tracks (as the held writer's first slice on each would), the
        names' text codes; check each stream's ops follow one another; ``out_stacks``: the
        stack ids of the part's API calls, which an op's may match (a flow). Each op's
        begin's fields go to a temporary file, read back by :meth:`windows`."""
        self.out_stacks = np.unique(np.asarray(out_stacks, dtype=np.int64))
        self.kernel_code = text.code("kernel")
        lanes = self.lanes = Lanes()
        carry = carry_track = None
        found = []  # stack ids of kernels that end a flow
        self.spill = tempfile.TemporaryFile(prefix="rocpd-perfetto-")
        labels = None
        bar = Bar(self._total(), f"reading {self.what}")
        for cols in self._ops(text):
            bar.tick(min(self.count, bar.total - 1))  # copies count too: the end is said once
            if labels is None or len(labels) != len(self.label_code):
                labels = list(self.label_code)
            keys, first, inv = self._keys(cols)
            for j in np.argsort(first, kind="stable").tolist():
                key = keys[j]
                if key not in self.uuid:
                    if gpu is None:
                        raise Held  # a track not met before (its tracks are made first)
                    pid, code, sid = key
                    label = labels[code]
                    self._track(key, tracks.get(("s", self.guid, pid, label, sid),
                                                gpu(self.guid, pid, label),
                                                name=self.streams.get(sid) or f"{self.lane} {sid}"),
                                per_track)
            track = np.array([self.uuid[k] for k in keys], dtype=np.int64)[inv]
            if (cols["end"] < cols["start"]).any():
                raise Held  # a slice ending before it starts: its lane's events out of order
            if carry is not None:
                cols = {c: np.concatenate([carry[c], v]) for c, v in cols.items()}
                track = np.concatenate([carry_track, track])
            # Slices at the chunk's last start wait for the next chunk, which may have more
            # (a track's slices at one start are swept longer first).
            last = cols["start"][-1]
            now = cols["start"] < last
            carry = {c: v[~now] for c, v in cols.items()}
            carry_track = track[~now]
            self._sweep(lanes, {c: v[now] for c, v in cols.items()}, track[now], found)
            lanes.settle(int(last))
            self._spill(lanes, int(last))
        if carry is not None:
            self._sweep(lanes, carry, carry_track, found)
        lanes.settle(None)
        self._spill(lanes, None)
        bar.tick(bar.total)
        # Each stack id that may carry a flow and how many of the ops have it (the encoder
        # forgets a flow's id after its last use).
        self.linked, self.uses = _counted(found)

    what = "kernels"

    def _total(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE guid = ?",
                                     (self.guid,)).fetchone()[0])

    def _track(self, key, u: int, per_track: dict) -> None:
        """Track ``u`` is the one of ``key``, its place among those with slices its first."""
        if u not in per_track:
            per_track[u] = array("q")
        self.uuid[key] = u
        self.rank[u] = list(per_track).index(u)

    def _sweep(self, lanes, cols, track, found) -> None:
        """Sweep a chunk's ops into their tracks' lanes and spill what they give out."""
        n = len(track)
        self.count += n
        if not n:
            return
        order = np.lexsort((np.arange(n), -cols["end"], cols["start"], track))
        t = track[order]
        cut = np.flatnonzero(t[1:] != t[:-1]) + 1
        for lo, hi in zip([0, *cut.tolist()], [*cut.tolist(), n], strict=True):
            o = order[lo:hi]
            lanes.feed(int(t[lo]), cols["start"][o], cols["end"][o], o)
        stack = cols["stack"]
        if "may" in cols:  # API calls: each may start a flow, known when the kernels are read
            ends = (stack != 0) & (cols["may"] != 0)
        else:
            ends = (stack != 0) & np.isin(stack, self.out_stacks)
        found.append(stack[ends])
        self._ops = {"name": cols["name"], "cat": cols["cat"], "stack": stack,
                     "flow": ends.astype(np.int64)}

    def _spill(self, lanes, limit) -> None:
        """The begins and ends given out so far, with the begins' fields, to the spill."""
        (bt, btrack, blane, bpos, bop), (et, etrack, elane, epos) = lanes.take()
        ops = getattr(self, "_ops", None)
        fields = [ops[c][bop] if ops is not None and len(bop) else np.zeros(len(bop), np.int64)
                  for c in ("name", "cat", "stack", "flow")]
        self._ops = None
        np.save(self.spill, np.stack([bt, btrack, blane, bpos, *fields]))
        np.save(self.spill, np.stack([et, etrack, elane, epos]))
        np.save(self.spill, np.array([_FIRST if limit is None else limit], dtype=np.int64))
        self.chunks += 1

    def _flows(self, may, stack):
        """A begin's flow field: a kernel's, found in the first pass, ends a flow (_IN)."""
        return may * 2

    def windows(self, part: int):
        """Per chunk: (the events' fields final before ``limit``, with their tracks' places and
        their own on the track, limit); the last window's limit None. Fields as
        _perfetto_packets.Encoder.pack takes them."""
        rank = np.zeros(max(self.rank, default=0) + 1, dtype=np.int64)
        for u, r in self.rank.items():
            rank[u] = r
        self.spill.seek(0)
        overlap = self.overlap  # (uuid, lane) -> the "(overlap N)" track's uuid
        wait = None
        for _ in range(self.chunks):
            b, e = np.load(self.spill), np.load(self.spill)
            limit = int(np.load(self.spill)[0])
            nb, ne = b.shape[1], e.shape[1]
            base = np.concatenate([b[1], e[1]])
            lane = np.concatenate([b[2], e[2]])
            track = base.copy()
            for i in np.flatnonzero(lane).tolist():
                track[i] = overlap[(int(base[i]), int(lane[i]))]
            ev = {"ts": np.concatenate([b[0], e[0]]), "track": track,
                  "kind": np.concatenate([np.ones(nb, np.int64), np.full(ne, 2, np.int64)]),
                  "name": np.concatenate([b[4], np.zeros(ne, np.int64)]),
                  "cat": np.concatenate([b[5], np.zeros(ne, np.int64)]),
                  "stack": np.concatenate([b[6], np.zeros(ne, np.int64)]),
                  "flow": np.concatenate([self._flows(b[7], b[6]), np.zeros(ne, np.int64)])
                  .astype(np.int8),
                  "part": np.full(nb + ne, part, dtype=np.int32),
                  "value": np.zeros(nb + ne),
                  "rank": rank[base],
                  "pos": (lane << 40) | np.concatenate([b[3], e[3]])}
            if wait is not None:
                ev = {k: np.concatenate([wait[k], v]) for k, v in ev.items()}
            if limit == _FIRST:  # the last: everything left
                wait = ev
                break
            now = ev["ts"] < limit
            out = {k: v[now] for k, v in ev.items()}
            wait = {k: v[~now] for k, v in ev.items()}
            del b, e, base, lane, track, ev, now  # only what waits stays while others are read
            yield out, limit
            del out
        self.spill.close()
        if wait is not None:
            yield wait, None


def _counted(parts: list):
    """(sorted unique values, their counts) of int64 arrays given in pieces."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    u, c = np.unique(np.concatenate(parts), return_counts=True)
    return u, c.astype(np.int64)


def _merged(k: dict, c: dict) -> dict:
    """Kernels ``k`` and copies ``c`` (each sorted) as one set of columns sorted by start,
    kernels first at one start."""
    order = np.argsort(np.concatenate([k["start"], c["start"]]), kind="stable")
    return {x: np.concatenate([k[x], c[x]])[order] for x in k}
