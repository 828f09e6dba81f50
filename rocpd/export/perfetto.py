"""Perfetto protobuf trace (ui.perfetto.dev, trace_processor), built with the ``perfetto`` package's
trace builder and its generated protos (no hand-written protobuf encoding).

Tracks: one per process (ProcessDescriptor) and per CPU thread (ThreadDescriptor); under each
process one track per GPU agent and under it one per stream. Slices: regions (API calls, ROCTx
ranges, nested as recorded) on their thread; kernels and copies on their stream. Sampled
counters (device and host metrics, ``--process-freq``) are counter tracks named as their rocpd
track ("device_busy_gfx [0]"), with their units: a GPU's under its GPU track, the host's and
process's under the process. A flow joins an
API call that has a correlation id to the kernel or copy with the same correlation id in the same
database part. TrackEvent slices must nest on a track, so a slice that overlaps its neighbour
without nesting goes to an extra "(overlap N)" track under the same parent instead of being cut.
Timestamps stay nanoseconds on CLOCK_BOOTTIME, the clock Perfetto assumes by default.

ROCm's convert options: ``agent_index`` (rocpd.export.agent_sql), ``group_by_queue`` (GPU work
on one track per queue instead of per stream) and the Perfetto buffer settings
(:mod:`rocpd.export._perfetto_buffer`: a size limit honoured by its fill policy; the SDK's
backend and shared-memory hint recorded in the trace's config).
"""

from __future__ import annotations

from ..errors import RocpdError
from ..filters import Filter, resolve
from ..metrics import source_rows
from ..progress import Bar, iterate
from . import agent_numbers
from ._activity import REGION_NAME, gpu_activity
from ._perfetto_buffer import Budget, config_packet

_SEQ = 1  # one trusted packet sequence for the whole file


def _pb():
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
        from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder
    except ImportError:
        raise RocpdError("Perfetto export needs the 'perfetto' package (pip install perfetto)") from None
    return pb, StreamingTraceProtoBuilder


class _Tracks:
    """Track uuids and descriptors; uuids are small sequential integers, unique in the file."""

    def __init__(self):
        self.uuid: dict[tuple, int] = {}
        self.descriptors: list[tuple] = []  # (uuid, parent, kind, fields)

    def get(self, key, parent=None, kind="named", **fields) -> int:
        if key not in self.uuid:
            self.uuid[key] = len(self.uuid) + 1
            self.descriptors.append((self.uuid[key], parent, kind, fields))
        return self.uuid[key]


def _lanes(slices):
    """Split (start, end, payload) slices into lanes in which they nest; yields (lane, events) where
    events are (ts, is_begin, payload) in track order."""
    lanes: list[list] = []  # per lane: stack of ends
    out: list[list] = []
    for s in sorted(slices, key=lambda x: (x[0], -x[1])):
        start, end = s[0], s[1]
        for i, stack in enumerate(lanes):
            while stack and stack[-1][0] <= start:
                out[i].append((stack[-1][0], False, stack.pop()[1]))
            if not stack or end <= stack[-1][0]:
                break
        else:
            lanes.append([])
            out.append([])
            i = len(lanes) - 1
        lanes[i].append((end, s))
        out[i].append((start, True, s))
    for i, stack in enumerate(lanes):
        while stack:
            end, s = stack.pop()
            out[i].append((end, False, s))
    return list(enumerate(out))


def write(db, path: str, agent_index: str = "relative", group_by_queue: bool = False,
          buffer_size_kb: int | None = None, buffer_fill_policy: str = "discard",
          backend: str | None = None, shmem_size_hint_kb: int | None = None, **filters) -> str:
    pb, Builder = _pb()
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    tracks = _Tracks()
    per_track: dict[int, list] = {}  # track uuid -> [(start, end, name, category, corr, flow_out, flow_in)]
    counters: list[tuple] = []  # (ts, track uuid, value)
    flow_ids: dict[tuple, int] = {}

    def flow(guid, corr):
        return flow_ids.setdefault((guid, corr), len(flow_ids) + 1)

    for f in iterate(db.sources(), "reading"):
        procs = {}
        for guid, pid, cmd in f.conn.execute("SELECT guid, pid, command FROM rocpd_info_process"):
            procs[(guid, pid)] = tracks.get(("p", guid, pid), kind="process", pid=pid,
                                            name=f"{cmd or 'process'} ({pid})")
        names = {(g, p, t): n for g, p, t, n in f.conn.execute(
            "SELECT guid, pid, tid, name FROM rocpd_info_thread")}
        numbers, names_of = agent_numbers(f.conn, agent_index)

        def proc(guid, pid, procs=procs):
            if (guid, pid) not in procs:
                procs[(guid, pid)] = tracks.get(("p", guid, pid), kind="process", pid=pid, name=f"process ({pid})")
            return procs[(guid, pid)]

        region_sql = (f'SELECT guid, category, {REGION_NAME}, pid, tid, corr_id, start, "end" FROM regions'
                      f" WHERE {where}")
        for guid, cat, name, pid, tid, corr, start, end in f.conn.execute(region_sql, params):
            is_marker = bool(cat and cat.startswith("MARKER"))
            parent = proc(guid, pid)
            t = tracks.get(("t", guid, pid, tid), parent, kind="thread", pid=pid, tid=tid,
                           name=names.get((guid, pid, tid)) or f"thread {tid}")
            out = (guid, corr) if corr is not None and not is_marker else None
            per_track.setdefault(t, []).append((start, end, name, cat or "", corr, out, None))

        rows = gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue)
        lane = "Queue" if group_by_queue else "Stream"
        for kind, guid, name, pid, agent, sid, stream, corr, start, end in rows:
            a_name = names_of.get((guid, agent))
            g = tracks.get(("g", guid, pid, agent), proc(guid, pid),
                           name=f"GPU {agent}" + (f" ({a_name})" if a_name else ""))
            s = tracks.get(("s", guid, pid, agent, sid), g, name=stream or f"{lane} {sid}")
            inn = (guid, corr) if corr is not None else None
            per_track.setdefault(s, []).append((start, end, name or "(unknown)", kind, corr, None, inn))

        for guid, pid, ts, value, track, units, a_type, a_index in source_rows(f.conn, where, params):
            parent = proc(guid, pid)
            if a_type == "GPU":
                a_index = numbers.get((guid, a_index), a_index)
                a_name = names_of.get((guid, a_index))
                parent = tracks.get(("g", guid, pid, a_index), parent,
                                    name=f"GPU {a_index}" + (f" ({a_name})" if a_name else ""))
            c = tracks.get(("c", guid, pid, track), parent, kind="counter", name=track,
                           units=units or "")
            counters.append((ts, c, value))

    # Only draw flows whose both ends exist (an API call may launch something filtered out).
    ends = {x[6] for sl in per_track.values() for x in sl if x[6] is not None}
    linked = {x[5] for sl in per_track.values() for x in sl if x[5] is not None} & ends
    key_of = {v: k for k, v in tracks.uuid.items()}

    events = []  # (ts, order, track uuid, is_begin, slice)
    seq = 0
    for uuid in list(per_track):
        for lane, evs in _lanes(per_track[uuid]):
            t = uuid
            if lane:
                t = tracks.get(("overlap", key_of[uuid], lane), uuid, name=f"(overlap {lane})")
            for ts, begin, s in evs:
                events.append((ts, seq, t, begin, s))
                seq += 1
    for ts, track, value in counters:
        events.append((ts, seq, track, None, value))
        seq += 1
    events.sort(key=lambda e: (e[0], e[1]))

    with open(path, "wb") as raw:
        fh = Budget(raw, buffer_size_kb, buffer_fill_policy)
        b = Builder(fh)
        if buffer_size_kb is not None or buffer_fill_policy != "discard" or backend is not None \
                or shmem_size_hint_kb is not None:
            p = b.create_packet()
            config_packet(p, buffer_size_kb, buffer_fill_policy, backend, shmem_size_hint_kb)
            b.write_packet(p)
        first = True
        for uuid, parent, kind, fields in tracks.descriptors:
            p = b.create_packet()
            p.trusted_packet_sequence_id = _SEQ
            if first:
                p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
                first = False
            d = p.track_descriptor
            d.uuid = uuid
            if parent is not None:
                d.parent_uuid = parent
            if kind == "process":
                d.process.pid = fields["pid"]
                d.process.process_name = fields["name"]
            elif kind == "thread":
                d.thread.pid = fields["pid"]
                d.thread.tid = fields["tid"]
                d.thread.thread_name = fields["name"]
            elif kind == "counter":
                d.name = fields["name"]
                d.counter.unit_name = fields["units"]
            else:
                d.name = fields["name"]
            b.write_packet(p)
        fh.events()
        bar = Bar(len(events), "writing")
        for i, (ts, _, track, begin, s) in enumerate(events):
            if i % 65536 == 0:
                bar.tick(i)
            p = b.create_packet()
            p.trusted_packet_sequence_id = _SEQ
            p.timestamp = ts
            e = p.track_event
            e.track_uuid = track
            if begin is None:  # a counter value
                e.type = pb.TrackEvent.TYPE_COUNTER
                e.double_counter_value = s
            elif begin:
                start, end, name, cat, corr, out, inn = s
                e.type = pb.TrackEvent.TYPE_SLICE_BEGIN
                e.name = name
                if cat:
                    e.categories.append(cat)
                if corr is not None:
                    a = e.debug_annotations.add()
                    a.name = "corr_id"
                    a.int_value = corr
                if out is not None and out in linked:
                    e.flow_ids.append(flow(*out))
                if inn is not None and inn in linked:
                    e.terminating_flow_ids.append(flow(*inn))
            else:
                e.type = pb.TrackEvent.TYPE_SLICE_END
            b.write_packet(p)
        bar.tick(len(events))
        fh.finish(path)
    return path
