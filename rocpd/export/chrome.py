"""Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): CPU regions on their process/thread,
kernels and copies on one track per GPU and stream, flow arrows from the launching API call to the
kernel or copy with the same correlation id, sampled counters (``--process-freq`` metrics) as
counter events ("ph": "C") named as their rocpd track, the value under "value". Timestamps are
microseconds as the format requires."""

from __future__ import annotations

import json

from ..filters import Filter, resolve
from ..metrics import source_rows
from ..progress import iterate
from ._activity import REGION_NAME, gpu_activity

# GPU tracks get synthetic thread ids far above any OS tid so they never collide with CPU threads.
_GPU_TID_BASE = 1 << 40


def _us(ns: int) -> float:
    return ns / 1000.0


def write(db, path: str, agent_index: str = "relative", group_by_queue: bool = False,
          **filters) -> str:
    """``agent_index``, ``group_by_queue``: as ROCm's convert options (rocpd.export.perfetto)."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    events: list[dict] = []
    named: set = set()

    def name_track(pid, tid, name):
        if (pid, tid) not in named:
            named.add((pid, tid))
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": name}})

    for f in iterate(db.sources(), "converting"):
        for pid, cmd in f.conn.execute("SELECT pid, command FROM rocpd_info_process"):
            events.append({"ph": "M", "name": "process_name", "pid": pid,
                           "args": {"name": f"{cmd or 'process'} ({pid})"}})
        api_corr = {}
        for cat, name, pid, tid, corr, start, end in f.conn.execute(
                f'SELECT category, {REGION_NAME}, pid, tid, corr_id, start, "end" FROM regions'
                f" WHERE {where} ORDER BY start, \"end\" DESC", params):
            events.append({"ph": "X", "name": name, "cat": cat or "", "pid": pid, "tid": tid,
                           "ts": _us(start), "dur": _us(end - start), "args": {"corr_id": corr}})
            if corr is not None and cat and not cat.startswith("MARKER"):
                api_corr[(pid, corr)] = (pid, tid, start)
        rows = gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue)
        lane = "Queue" if group_by_queue else "Stream"
        for kind, _guid, name, pid, agent, stream_id, stream, corr, start, end in rows:
            tid = _GPU_TID_BASE + (agent or 0) * 1_000_000 + (stream_id or 0)
            name_track(pid, tid, f"GPU {agent} / {stream or f'{lane} {stream_id}'}")
            events.append({"ph": "X", "name": name, "cat": kind, "pid": pid, "tid": tid,
                           "ts": _us(start), "dur": _us(end - start), "args": {"corr_id": corr}})
            src = api_corr.get((pid, corr))
            if src is not None:
                fid = f"{pid}:{corr}"
                events.append({"ph": "s", "id": fid, "name": "launch", "cat": "flow", "pid": src[0],
                               "tid": src[1], "ts": _us(src[2])})
                events.append({"ph": "f", "bp": "e", "id": fid, "name": "launch", "cat": "flow",
                               "pid": pid, "tid": tid, "ts": _us(start)})
        for _guid, pid, ts, value, track, _units, _type, _index in source_rows(f.conn, where, params):
            events.append({"ph": "C", "name": track, "cat": "metrics", "pid": pid, "ts": _us(ts),
                           "args": {"value": value}})
    with open(path, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, fh)
    return path
