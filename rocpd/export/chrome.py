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

from ..device_metrics.samples import source_rows
from ..io.filters import Filter, resolve
from ..io.output_file import open_output
from ..progress import iterate
from . import _activity as act

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".json", "target": "file", "aliases": ["json"], "rocprofv3": "json",
          "label": "Chrome trace"}

# GPU tracks get synthetic thread ids far above any OS tid so they never collide with CPU threads.
_GPU_TID_BASE = 1 << 40


def _us(ns: int) -> float:
    return ns / 1000.0


def write(db, path: str, agent_index: str = act.LABEL_INDEX, group_by_queue: bool = False,
          **filters) -> str:
    """``agent_index``, ``group_by_queue``: as ROCm's convert options (rocpd.export.perfetto)."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    events: list[dict] = []
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

    for f in iterate(db.sources(), "converting"):
        for pid, cmd in f.conn.execute("SELECT pid, command FROM rocpd_info_process"):
            events.append({"ph": "M", "name": "process_name", "pid": pid,
                           "args": {"name": f"{cmd or 'process'} ({pid})"}})
        for pid, tid, name in f.conn.execute("SELECT pid, tid, name FROM rocpd_info_thread"):
            name_track(pid, tid, name or f"Thread {tid}")
        launches = {}
        for _g, cat, name, pid, tid, stack, start, end in sorted(
                act.regions(f.conn, where, params), key=lambda r: (r[6], -r[7])):
            events.append({"ph": "X", "name": name, "cat": cat or "", "pid": pid, "tid": tid,
                           "ts": _us(start), "dur": _us(end - start), "args": {"corr_id": stack}})
            if stack and cat and not cat.startswith("MARKER"):
                launches[(pid, stack)] = (pid, tid, start)
        for _g, cat, name, pid, tid, ts in act.marks(f.conn, where, params):
            events.append({"ph": "i", "s": "t", "name": name, "cat": cat or "", "pid": pid,
                           "tid": tid, "ts": _us(ts)})
        for _g, cat, name, pid, tid, ts, frames in act.samples(f.conn, where, params):
            e = {"ph": "i", "s": "t", "name": name, "cat": cat or "", "pid": pid, "tid": tid,
                 "ts": _us(ts)}
            if frames:  # the stack, outermost first, as collapsed stacks spell it
                e["args"] = {"stack": ";".join(fr.label(lines=True) for fr in frames)}
            events.append(e)
        lane = "Queue" if group_by_queue else "Stream"
        for kind, _g, name, pid, agent, label, sid, stream, stack, start, end in \
                act.gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue):
            tid = _GPU_TID_BASE + gpu_tracks.setdefault((pid, agent, sid), len(gpu_tracks))
            name_track(pid, tid, f"{label} / {stream or f'{lane} {sid}'}")
            events.append({"ph": "X", "name": name, "cat": kind, "pid": pid, "tid": tid,
                           "ts": _us(start), "dur": _us(end - start), "args": {"corr_id": stack}})
            src = launches.get((pid, stack)) if stack else None
            if src is not None:
                fid = f"{pid}:{stack}"
                events.append({"ph": "s", "id": fid, "name": "launch", "cat": "flow", "pid": src[0],
                               "tid": src[1], "ts": _us(src[2])})
                events.append({"ph": "f", "bp": "e", "id": fid, "name": "launch", "cat": "flow",
                               "pid": pid, "tid": tid, "ts": _us(start)})
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
    with open_output(path) as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, fh)
    return path
