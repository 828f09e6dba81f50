"""Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): CPU regions on their process/thread
(every thread named, "thread_name" metadata), ROCTx marks and the other samples as thread-scoped
instant events ("ph": "i"; a call-stack sample named by its innermost function, its stack in
args.stack), kernels and copies on one track per GPU and stream (a copy under the GPU taking part
in it), scratch-memory operations on a "Scratch memory" track per GPU, flow arrows from the launching API call to the kernel or copy it enqueued (the same
``stack_id``, see rocpd.export._activity), counter events ("ph": "C", the value under "value")
for the bytes allocated on each GPU (the runtime's allocations; PyTorch's caching allocator as
"Torch allocated bytes" and "Torch reserved bytes"), each hardware counter of the dispatches (its value while
the dispatch runs) and sampled counters (``--process-freq`` metrics, named as their rocpd track).
Timestamps are microseconds as the format requires."""

from __future__ import annotations

import json
import os
from array import array

import numpy as np

from ..device_metrics.samples import source_rows
from ..io.filters import Filter, resolve
from ..io.output_file import open_output
from ..progress import Rows, iterate
from . import _activity as act

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".json", "target": "file", "aliases": ["json"], "rocprofv3": "json",
          "label": "Chrome trace"}

# GPU ops looked up against their launching calls at a time.
_GPU_BLOCK = 1 << 14

# GPU tracks get synthetic thread ids far above any OS tid so they never collide with CPU threads.
_GPU_TID_BASE = 1 << 40


def _us(ns: int) -> float:
    return ns / 1000.0


_JSON_STRINGS: dict = {}  # names and categories as JSON text: a trace repeats few of them


def _js(v) -> str:
    """``json.dumps(v)`` of a name, category, id or time, faster for the values that repeat."""
    if type(v) is int:
        return int.__repr__(v)
    if type(v) is str:
        text = _JSON_STRINGS.get(v)
        if text is None:
            text = json.dumps(v)
            if len(_JSON_STRINGS) < 1 << 16:
                _JSON_STRINGS[v] = text
        return text
    return json.dumps(v)


def _slice(name, cat, pid, tid, start: int, end: int, corr) -> str:
    """json.dumps of a slice's event ("ph": "X") with its correlation id, as the dict would be."""
    return (f'{{"ph": "X", "name": {_js(name)}, "cat": {_js(cat)}, "pid": {_js(pid)}, '
            f'"tid": {_js(tid)}, "ts": {_us(start)!r}, "dur": {_us(end - start)!r}, '
            f'"args": {{"corr_id": {_js(corr)}}}}}')


class _Events:
    """The ``traceEvents`` array written as it is made, in json.dump's bytes of the whole
    document (``, `` between events): nothing of the trace is held but a batch."""

    _BATCH = 8192

    def __init__(self, fh):
        self.fh, self.parts, self.count = fh, [], 0
        fh.write('{"traceEvents": [')

    def append(self, event: dict) -> None:
        self.append_text(json.dumps(event))

    def append_text(self, text: str) -> None:
        """An event already in json.dumps's text (_slice)."""
        self.parts.append(text)
        self.count += 1
        if len(self.parts) >= self._BATCH:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.fh.write((", " if self.count > len(self.parts) else "") + ", ".join(self.parts))
            self.parts = []

    def close(self) -> None:
        self.flush()
        self.fh.write('], "displayTimeUnit": "ns"}')


_NO_PID = np.iinfo(np.int64).min  # a row without a process (None) among the integer keys


def _sample_text(name, cat, pid, tid, frames) -> tuple[str, str]:
    """json.dumps's text of a sample's event, as the parts before and after its time (a float:
    json.dumps writes its repr)."""
    head = json.dumps({"ph": "i", "s": "t", "name": name, "cat": cat or "", "pid": pid,
                       "tid": tid, "ts": 0.0})
    tail = "}"
    if frames:  # the stack, outermost first, as collapsed stacks spell it
        stack = ";".join(fr.label(lines=True) for fr in frames)
        tail = ', "args": ' + json.dumps({"stack": stack}) + "}"
    return head[:-len("0.0}")], tail


class _Launches:
    """The launching call of each (pid, stack id): the last region of that key in time order.
    Kept per process in integer columns (24 bytes a call) and looked up a block of GPU ops at
    a time: a trace of tens of millions of calls holds no Python object per call."""

    def __init__(self):
        self.cols: dict[int, tuple] = {}  # pid -> (stack ids, tids, starts)
        self.by_pid: dict[int, tuple] = {}

    def add(self, pid, stack: int, tid, start: int) -> None:
        cols = self.cols.get(_NO_PID if pid is None else pid)
        if cols is None:
            cols = self.cols[_NO_PID if pid is None else pid] = tuple(array("q") for _ in range(3))
        cols[0].append(stack)
        cols[1].append(_NO_PID if tid is None else tid)
        cols[2].append(start)

    def freeze(self) -> None:
        for pid in list(self.cols):
            stack, tid, start = (np.frombuffer(c, dtype=np.int64) for c in self.cols.pop(pid))
            order = np.argsort(stack, kind="stable")  # by id, then in time order
            stack = stack[order]
            last = np.ones(len(stack), dtype=bool)  # the last of each id wins, as a dict's would
            last[:-1] = stack[1:] != stack[:-1]
            keep = order[last]
            self.by_pid[pid] = (stack[last], tid[keep], start[keep])

    def find(self, pids: list, stacks: list) -> list:
        """[(pid, tid, start) or None] of each (pid, stack id); a stack id of 0 has none."""
        out: list = [None] * len(pids)
        p = np.array([_NO_PID if v is None else v for v in pids], dtype=np.int64)
        s = np.asarray(stacks, dtype=np.int64)
        for pv in np.unique(p).tolist():
            held = self.by_pid.get(pv)
            if held is None or not len(held[0]):
                continue
            st, tid, start = held
            sel = np.flatnonzero(p == pv)
            j = np.minimum(np.searchsorted(st, s[sel]), len(st) - 1)
            hit = (st[j] == s[sel]) & (s[sel] != 0)
            owner = None if pv == _NO_PID else pv
            for i, k in zip(sel[hit].tolist(), j[hit].tolist(), strict=True):
                t = int(tid[k])
                out[i] = (owner, None if t == _NO_PID else t, int(start[k]))
        return out


def write(db, path: str, agent_index: str = act.LABEL_INDEX, group_by_queue: bool = False,
          **filters) -> str:
    """``agent_index``, ``group_by_queue``: as ROCm's convert options (rocpd.export.perfetto).
    Streamed: the events are written as they are read, the regions and the GPU work in time
    order from SQLite."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    with open_output(path) as fh:
        events = _Events(fh)
        _write_events(db, events, where, params, flt, agent_index, group_by_queue)
        events.close()
    return path


def _write_events(db, events: _Events, where, params, flt, agent_index, group_by_queue) -> None:
    named: set = set()
    gpu_tracks: dict[tuple, int] = {}  # (pid, agent, stream id) -> track number: ids may be handles

    def name_track(pid, tid, name):
        if (pid, tid) not in named:
            named.add((pid, tid))
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": name}})

    def counter(pid, name, ts, value):
        events.append({"ph": "C", "name": name, "cat": "counters", "pid": pid, "ts": _us(ts),
                       "args": {"value": value}})

    def gpu_op(row, src):
        kind, _g, name, pid, agent, label, sid, stream, stack, start, end = row
        tid = _GPU_TID_BASE + gpu_tracks.setdefault((pid, agent, sid), len(gpu_tracks))
        name_track(pid, tid, f"{label} / {stream or f'{lane} {sid}'}")
        events.append_text(_slice(name, kind, pid, tid, start, end, stack))
        if src is not None:
            fid = f'"{pid}:{stack}"'  # digits and a colon: nothing to escape
            events.append_text(f'{{"ph": "s", "id": {fid}, "name": "launch", "cat": "flow", '
                               f'"pid": {_js(src[0])}, "tid": {_js(src[1])}, '
                               f'"ts": {_us(src[2])!r}}}')
            events.append_text(f'{{"ph": "f", "bp": "e", "id": {fid}, "name": "launch", '
                               f'"cat": "flow", "pid": {_js(pid)}, "tid": {_js(tid)}, '
                               f'"ts": {_us(start)!r}}}')

    lane = "Queue" if group_by_queue else "Stream"
    for f in iterate(db.sources(), "converting"):
        for pid, cmd in f.conn.execute("SELECT pid, command FROM rocpd_info_process"):
            events.append({"ph": "M", "name": "process_name", "pid": pid,
                           "args": {"name": f"{cmd or 'process'} ({pid})"}})
        for pid, tid, name in f.conn.execute("SELECT pid, tid, name FROM rocpd_info_thread"):
            name_track(pid, tid, name or f"Thread {tid}")
        launches = _Launches()
        rows_bar = Rows(f.conn, f"converting {os.path.basename(f.path)}")
        for _g, cat, name, pid, tid, stack, start, end in rows_bar.counted(act.regions_by_start(
                f.conn, where, params)):
            events.append_text(_slice(name, cat or "", pid, tid, start, end, stack))
            if stack and cat and not cat.startswith("MARKER"):
                launches.add(pid, stack, tid, start)
        launches.freeze()
        for _g, cat, name, pid, tid, ts in rows_bar.counted(act.marks(f.conn, where, params)):
            events.append({"ph": "i", "s": "t", "name": name, "cat": cat or "", "pid": pid,
                           "tid": tid, "ts": _us(ts)})
        # A sample's event is json.dumps's text of its dict, made once per distinct sample
        # (name, category, thread, stack) around its time: a stack's text joins ~20 frames.
        made: dict[tuple, tuple] = {}
        for _g, cat, name, pid, tid, ts, frames in rows_bar.counted(act.samples(f.conn, where,
                                                                                params)):
            key = (cat, name, pid, tid, id(frames))
            got = made.get(key)
            if got is None:
                got = made[key] = (*_sample_text(name, cat, pid, tid, frames), frames)
            events.append_text(got[0] + repr(_us(ts)) + got[1])
        block: list[tuple] = []
        gpu = act.gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue)
        while True:
            row = next(gpu, None)
            if row is not None:
                block.append(row)
            if block and (row is None or len(block) >= _GPU_BLOCK):
                found = launches.find([r[3] for r in block], [r[8] or 0 for r in block])
                for r, src in zip(block, found, strict=True):
                    gpu_op(r, src)
                rows_bar.add(len(block))
                block = []
            if row is None:
                break
        for _g, pid, label, op, start, end, size in act.scratch(f.conn, where, params,
                                                                 agent_index):
            tid = _GPU_TID_BASE + gpu_tracks.setdefault((pid, label, "scratch"), len(gpu_tracks))
            name_track(pid, tid, f"{label} / Scratch memory")
            events.append({"ph": "X", "name": op, "cat": "SCRATCH_MEMORY", "pid": pid, "tid": tid,
                           "ts": _us(start), "dur": _us(end - start), "args": {"size": size}})
        for _g, pid, label, ts, total in act.allocations(f.conn, where, params, agent_index):
            counter(pid, f"Allocated bytes ({label})", ts, total)
        for _g, pid, label, ts, allocated, reserved in act.allocator_totals(f.conn, where, params,
                                                                           agent_index):
            counter(pid, f"Torch allocated bytes ({label})", ts, allocated)
            counter(pid, f"Torch reserved bytes ({label})", ts, reserved)
        for _g, pid, label, name, start, end, value in act.counter_values(f.conn, where, params,
                                                                        agent_index):
            counter(pid, f"PMC {name} ({label})", start, value)
            counter(pid, f"PMC {name} ({label})", end, 0)
        for _guid, pid, ts, value, track, _units, _type, _index in source_rows(f.conn, where, params):
            events.append({"ph": "C", "name": track, "cat": "metrics", "pid": pid, "ts": _us(ts),
                           "args": {"value": value}})
        rows_bar.close()
