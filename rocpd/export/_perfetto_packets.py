"""The Perfetto writer's event packets encoded a chunk at a time with numpy, byte for byte what
the perfetto package's TracePacket would serialize for them (upb writes fields in field-number
order; rocpd.export.perfetto filled the same fields), without a protobuf object per event: the
builder's ~6 µs a packet made the trace most of a report's time.

A packet, as the builder frames it in the Trace: 0a <len> then
  40 <ts>  50 01  5a <len> TrackEvent{
    [22 <len> DebugAnnotation{20 <corr_id> 52 07 "corr_id"}]   slice begin with a stack id
    48 <type>  58 <track uuid>
    [b2 01 <len> category]   begin or instant with a category
    [ba 01 <len> name]       begin or instant (an empty name too: the field is set)
    [e1 02 <double>]         counter value
    [f9 02 <fixed64>] / [81 03 <fixed64>]   flow id out / terminating flow id in }
"""

from __future__ import annotations

import numpy as np

_BEGIN, _END, _INSTANT, _COUNTER = 1, 2, 3, 4
_OUT, _IN = 1, 2
_CORR = bytes([0x52, 0x07]) + b"corr_id"


_WIDTHS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _vlen(v: np.ndarray) -> np.ndarray:
    """Bytes of each value as a protobuf varint (a negative int64: ten): one more than the
    number of the powers 2^7k (k = 1..9) at or below it."""
    return 1 + np.searchsorted(_WIDTHS, v.astype(np.uint64), side="right").astype(np.int64)


def _put_varint(buf: np.ndarray, at: np.ndarray, v: np.ndarray, n: np.ndarray) -> None:
    u = v.astype(np.uint64)
    for k in range(int(n.max()) if len(n) else 0):
        m = n > k
        byte = (u[m] >> np.uint64(7 * k)) & np.uint64(0x7F)
        byte |= np.where(n[m] - 1 > k, np.uint64(0x80), np.uint64(0))
        buf[at[m] + k] = byte.astype(np.uint8)


def _put_bytes(buf: np.ndarray, at: np.ndarray, data: bytes) -> None:
    for k, b in enumerate(data):
        buf[at + k] = b


def _put_runs(buf, at, src: np.ndarray, start: np.ndarray, length: np.ndarray) -> None:
    """Copy src[start[i]:start[i] + length[i]] to buf[at[i]:...] for every i."""
    total = int(length.sum())
    if not total:
        return
    inner = np.arange(total) - np.repeat(np.cumsum(length) - length, length)
    buf[np.repeat(at, length) + inner] = src[np.repeat(start, length) + inner]


class Encoder:
    """Encodes events (times, track uuids, codes as rocpd.export.perfetto._events makes them)."""

    def __init__(self, text, r_name, r_cat, stack, part, flow, values):
        self.text = np.frombuffer(bytes(text.buf), dtype=np.uint8)
        ends = np.frombuffer(text.ends, dtype=np.int64)
        self.t_start = np.concatenate([[0], ends[:-1]])
        self.t_len = ends - self.t_start
        self.name = np.frombuffer(r_name, dtype=np.int64)
        self.cat = np.frombuffer(r_cat, dtype=np.int64)
        self.stack = np.frombuffer(stack, dtype=np.int64)
        self.part = np.frombuffer(part, dtype=np.int32)
        self.flow = np.frombuffer(flow, dtype=np.int8)
        self.values = np.frombuffer(values, dtype=np.float64)
        self.flow_ids: dict = {}
        self.uses = None  # see forget_after
        self.next_id = 0

    def forget_after(self, uses: dict) -> None:
        """``uses``: part -> (sorted stack ids, how many events carry each's flow): a flow's id
        is dropped after its last event, so that the ids held are those of flows still open."""
        self.uses = uses
        self.left: dict = {}  # (part, stack id) -> its events still to come

    def _flow_ids(self, part: np.ndarray, stack: np.ndarray) -> np.ndarray:
        """Each flow's id, numbered by first appearance in the order written (as the writer's
        dict of (part, stack id) did)."""
        keys = list(zip(part.tolist(), stack.tolist(), strict=True))
        ids = self.flow_ids
        if self.uses is None:
            return np.array([ids.setdefault(k, len(ids) + 1) for k in keys], dtype=np.int64)
        out = np.empty(len(keys), dtype=np.int64)
        left = self.left
        for i, k in enumerate(keys):
            v = ids.get(k)
            if v is None:
                self.next_id += 1
                v = ids[k] = self.next_id
                u, c = self.uses.get(k[0], (None, None))
                j = int(np.searchsorted(u, k[1])) if u is not None else 0
                left[k] = int(c[j]) if u is not None and j < len(u) and u[j] == k[1] else 0
            out[i] = v
            left[k] -= 1
            if left[k] <= 0:
                del ids[k], left[k]
        return out

    def encode(self, ts: np.ndarray, track: np.ndarray, code: np.ndarray):
        """(bytes of the packets, each packet's length) for these events, in their order."""
        return self.pack(self.fields(ts, track, code))

    def fields(self, ts: np.ndarray, track: np.ndarray, code: np.ndarray) -> dict:
        """The events' fields as arrays (what :meth:`pack` writes), from their codes."""
        neg = code < 0
        kind = np.where(neg, np.where(code & 1, _COUNTER, _INSTANT),
                        np.where(code & 1, _BEGIN, _END)).astype(np.int64)
        rec = np.where(neg, (-2 - code) >> 1, code >> 1)
        rec = np.where(kind == _COUNTER, 0, rec)  # a counter's number is a value's, not a record's
        named = (kind == _BEGIN) | (kind == _INSTANT)
        begin = kind == _BEGIN
        counter = kind == _COUNTER
        return {"ts": ts, "track": track, "kind": kind,
                "name": np.where(named, self.name[rec] if len(self.name) else 0, 0),
                "cat": np.where(named, self.cat[rec] if len(self.cat) else 0, 0),
                "stack": np.where(begin, self.stack[rec] if len(self.stack) else 0, 0),
                "flow": np.where(begin, self.flow[rec] if len(self.flow) else 0, 0).astype(np.int8),
                "part": self.part[rec] if len(self.part) else np.zeros(len(ts), np.int32),
                "value": np.where(counter, self.values[np.where(counter, (-1 - code) >> 1, 0)]
                                  if len(self.values) else 0.0, 0.0)}

    def pack(self, f: dict):
        """(bytes of the packets, each packet's length) for events given by their fields: ts,
        track, kind, name and cat (text codes; 0 for none), stack (a begin's stack id), flow
        (_OUT, _IN or 0), part (of the flow's stack id), value (a counter's)."""
        ts, track, kind, name_c, cat_c = f["ts"], f["track"], f["kind"], f["name"], f["cat"]
        stk, fl = f["stack"], f["flow"]
        named = (kind == _BEGIN) | (kind == _INSTANT)
        has_cat = named & (cat_c != 0)
        has_dbg = (kind == _BEGIN) & (stk != 0)
        # Lengths of the TrackEvent's parts.
        uuid_n = _vlen(track)
        stk_n = np.where(has_dbg, _vlen(stk), 0)
        dbg_body = 1 + stk_n + len(_CORR)
        dbg_n = np.where(has_dbg, 1 + _vlen(dbg_body) + dbg_body, 0)
        cat_len = self.t_len[cat_c]
        cat_n = np.where(has_cat, 2 + _vlen(cat_len) + cat_len, 0)
        name_len = self.t_len[name_c]
        name_n = np.where(named, 2 + _vlen(name_len) + name_len, 0)
        val_n = np.where(kind == _COUNTER, 10, 0)
        flow_n = np.where(fl != 0, 10, 0)
        te_n = dbg_n + 2 + 1 + uuid_n + cat_n + name_n + val_n + flow_n
        ts_n = _vlen(ts)
        pk_n = 1 + ts_n + 2 + 1 + _vlen(te_n) + te_n
        total_n = 1 + _vlen(pk_n) + pk_n
        out = np.zeros(int(total_n.sum()), dtype=np.uint8)
        at = np.cumsum(total_n) - total_n
        out[at] = 0x0A
        at = at + 1
        _put_varint(out, at, pk_n, _vlen(pk_n))
        at = at + _vlen(pk_n)
        out[at] = 0x40
        _put_varint(out, at + 1, ts, ts_n)
        at = at + 1 + ts_n
        _put_bytes(out, at, b"\x50\x01\x5a")
        at = at + 3
        _put_varint(out, at, te_n, _vlen(te_n))
        at = at + _vlen(te_n)
        d = np.flatnonzero(has_dbg)
        if d.size:
            a = at[d]
            out[a] = 0x22
            _put_varint(out, a + 1, dbg_body[d], _vlen(dbg_body[d]))
            a = a + 1 + _vlen(dbg_body[d])
            out[a] = 0x20
            _put_varint(out, a + 1, stk[d], stk_n[d])
            _put_bytes(out, a + 1 + stk_n[d], _CORR)
        at = at + dbg_n
        out[at] = 0x48
        out[at + 1] = kind.astype(np.uint8)
        out[at + 2] = 0x58
        _put_varint(out, at + 3, track, uuid_n)
        at = at + 3 + uuid_n
        for mask, codes, lens, tag2, size in ((has_cat, cat_c, cat_len, 0xB2, cat_n),
                                              (named, name_c, name_len, 0xBA, name_n)):
            i = np.flatnonzero(mask)
            if i.size:
                a = at[i]
                out[a], out[a + 1] = tag2, 0x01
                _put_varint(out, a + 2, lens[i], _vlen(lens[i]))
                _put_runs(out, a + 2 + _vlen(lens[i]), self.text, self.t_start[codes[i]], lens[i])
            at = at + size
        c = np.flatnonzero(kind == _COUNTER)
        if c.size:
            a = at[c]
            out[a], out[a + 1] = 0xE1, 0x02
            v = f["value"][c].astype("<f8").view(np.uint8).reshape(-1, 8)
            for k in range(8):
                out[a + 2 + k] = v[:, k]
        at = at + val_n
        fi = np.flatnonzero(fl != 0)
        if fi.size:
            a = at[fi]
            part = f["part"]
            out[a] = np.where(fl[fi] == _OUT, 0xF9, 0x81).astype(np.uint8)
            out[a + 1] = np.where(fl[fi] == _OUT, 0x02, 0x03).astype(np.uint8)
            ids = self._flow_ids(part[fi], stk[fi]).astype("<u8").view(np.uint8).reshape(-1, 8)
            for k in range(8):
                out[a + 2 + k] = ids[:, k]
        return out.tobytes(), total_n
