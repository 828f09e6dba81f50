"""Call-stack samples in a Perfetto trace as Perfetto's own CPU-profile data: one ``PerfSample``
packet per sample (pid, tid, time) naming an interned callstack, whose frames carry the function,
its source file and line, so the UI draws each thread's callstack-sampling track and a flame
graph of any selection (the trace processor's ``perf_sample`` and ``stack_profile_*`` tables).

Interned data (function names, source paths, mappings, frames, callstacks) is sent once, in the
packet of the first sample that needs it, on the trace's one packet sequence (whose first packet
cleared the incremental state). Frames of one kind (python, native) share one mapping named after
the kind: a Python frame has no binary to point at.
"""

from __future__ import annotations

from array import array

import numpy as np

from ._perfetto_packets import _put_bytes, _put_varint, _vlen


class Profile:
    """The samples of a trace, gathered while reading, written after the other events: 16
    bytes a sample (time, the thread's number, the stack's number), each distinct thread and
    stack held once."""

    def __init__(self):
        self.ts, self.thread, self.stack = array("q"), array("i"), array("i")
        self.chains: dict[tuple, int] = {}  # frames outermost first -> number
        self.threads: dict[tuple, int] = {}  # (pid, tid) -> number

    def __len__(self) -> int:
        return len(self.ts)

    def numbers(self, pid: int, tid: int, frames) -> tuple[int, int]:
        """(thread number, stack number) of a sample, numbered in the order first met."""
        chain = tuple(frames)
        n = self.chains.setdefault(chain, len(self.chains))
        return self.threads.setdefault((pid, tid), len(self.threads)), n

    def add_numbered(self, ts: int, thread: int, stack: int) -> None:
        self.ts.append(ts)
        self.thread.append(thread)
        self.stack.append(stack)

    def write(self, b, pb, seq: int, fh) -> None:
        """The samples' packets in time order (samples of one time in the order read): a
        sample whose stack is new carries the interned data it needs, through the builder;
        the packets between those are encoded in bulk (``fh``: the file's Budget)."""
        if not len(self.ts):
            return
        ts = np.frombuffer(self.ts, dtype=np.int64)
        order = np.argsort(ts, kind="stable")
        stack = np.frombuffer(self.stack, dtype=np.int32)[order]
        thread = np.frombuffer(self.thread, dtype=np.int32)[order]
        ids = np.array(list(self.threads), dtype=np.int64).reshape(-1, 2)
        if ts.min() < 0 or ids.min() < 0 or ids.max() >= 1 << 32:
            return self._write_each(b, pb, seq, order)  # as the builder checks and says
        _u, first = np.unique(stack, return_index=True)
        first.sort()  # where each stack is first met, in time order: its iid is its rank + 1
        iid = np.zeros(len(self.chains), dtype=np.int64)
        iid[stack[first]] = np.arange(1, len(first) + 1)
        interner = _Interner(list(self.chains), pb, seq)
        for a, b_ in zip(first.tolist(), [*first[1:].tolist(), len(order)], strict=True):
            i = int(order[a])
            pid, tid = ids[thread[a]].tolist()
            b.write_packet(interner.packet(int(ts[i]), pid, tid, int(stack[a])))
            for c in range(a + 1, b_, _BULK):
                sl = slice(c, min(c + _BULK, b_))
                t = ids[thread[sl]]
                fh.write_many(*_pack(ts[order[sl]], t[:, 0], t[:, 1], iid[stack[sl]], seq))

    def _write_each(self, b, pb, seq: int, order) -> None:
        interner = _Interner(list(self.chains), pb, seq)
        threads = list(self.threads)
        for a in range(0, len(order), _BULK):
            for i in order[a:a + _BULK].tolist():
                pid, tid = threads[self.thread[i]]
                b.write_packet(interner.packet(self.ts[i], pid, tid, self.stack[i]))


_BULK = 1 << 16  # samples encoded at a time


class _Interner:
    """PerfSample packets through the perfetto builder, a stack's frames, names, paths and
    mappings interned in the packet of the first sample that needs them."""

    def __init__(self, chains: list, pb, seq: int):
        self.chains, self.pb, self.seq = chains, pb, seq
        self.strings: dict[tuple, int] = {}  # (table, text) -> iid
        self.frames: dict[object, int] = {}
        self.stacks: dict[tuple, int] = {}

    def _string(self, table, text, interned):
        key = (table, text)
        if key not in self.strings:
            self.strings[key] = iid = len(self.strings) + 1
            getattr(interned, table).add(iid=iid, str=text.encode())
        return self.strings[key]

    def _mapping(self, kind, interned):
        key = ("mapping", kind)
        if key not in self.strings:
            path = self._string("mapping_paths", kind, interned)
            self.strings[key] = iid = len(self.strings) + 1
            interned.mappings.add(iid=iid, path_string_ids=[path])
        return self.strings[key]

    def packet(self, ts: int, pid: int, tid: int, stack: int):
        chain = self.chains[stack]
        p = self.pb.TracePacket()
        p.trusted_packet_sequence_id = self.seq
        p.sequence_flags = self.pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        p.timestamp = ts
        interned = p.interned_data
        if chain not in self.stacks:
            ids = []
            for f in chain:
                if f not in self.frames:
                    self.frames[f] = iid = len(self.frames) + 1
                    interned.frames.add(
                        iid=iid, function_name_id=self._string("function_names", f.function,
                                                               interned),
                        mapping_id=self._mapping(f.kind, interned),
                        source_path_iid=self._string("source_paths", f.file, interned),
                        line_number=f.line)
                ids.append(self.frames[f])
            self.stacks[chain] = iid = len(self.stacks) + 1
            interned.callstacks.add(iid=iid, frame_ids=ids)  # outermost (bottom) first
        else:
            p.ClearField("interned_data")
        s = p.perf_sample
        s.pid, s.tid, s.callstack_iid = pid, tid, self.stacks[chain]
        return p


def _pack(ts, pid, tid, iid, seq: int):
    """(bytes, each packet's length) of PerfSample packets without interned data, framed as
    the builder frames them: 0a <len> { 40 <ts> 50 <seq> 68 02 92 04 <len> { 10 <pid> 18 <tid>
    20 <callstack iid> } } (upb writes fields in field-number order, set fields even if 0)."""
    pid_n, tid_n, iid_n, ts_n = _vlen(pid), _vlen(tid), _vlen(iid), _vlen(ts)
    seq_b = _varint_bytes(seq)
    body = 3 + pid_n + tid_n + iid_n
    pk = 1 + ts_n + 1 + len(seq_b) + 2 + 2 + _vlen(body) + body
    total = 1 + _vlen(pk) + pk
    out = np.zeros(int(total.sum()), dtype=np.uint8)
    at = np.cumsum(total) - total
    out[at] = 0x0A
    _put_varint(out, at + 1, pk, _vlen(pk))
    at = at + 1 + _vlen(pk)
    out[at] = 0x40
    _put_varint(out, at + 1, ts, ts_n)
    at = at + 1 + ts_n
    _put_bytes(out, at, bytes([0x50, *seq_b, 0x68, 0x02, 0x92, 0x04]))
    at = at + 5 + len(seq_b)
    _put_varint(out, at, body, _vlen(body))
    at = at + _vlen(body)
    for tag, v, n in ((0x10, pid, pid_n), (0x18, tid, tid_n), (0x20, iid, iid_n)):
        out[at] = tag
        _put_varint(out, at + 1, v, n)
        at = at + 1 + n
    return out.tobytes(), total


def _varint_bytes(v: int) -> list:
    out = []
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return out
