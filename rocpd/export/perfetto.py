"""Perfetto protobuf trace (ui.perfetto.dev, trace_processor), built with the ``perfetto`` package's
trace builder and its generated protos (no hand-written protobuf encoding).

Tracks: one per process (ProcessDescriptor) and per CPU thread (ThreadDescriptor); under each
process one track per GPU agent and under it one per stream. Slices: regions (API calls, ROCTx
ranges, nested as recorded) on their thread; kernels and copies on their stream (a copy under
the GPU taking part in it). ROCTx marks are instant events on their thread. Counter tracks: the
bytes allocated on each GPU ("Allocated bytes (GPU 0)"), each hardware counter of the dispatches
("PMC <name>", its value while the dispatch runs) under the GPU track, and sampled counters
(device and host metrics, ``--process-freq``) named as their rocpd track ("device_busy_gfx
[0]"), with their units: a GPU's under its GPU track, the host's and process's under the
process. A flow joins an API call to the kernel or copy it enqueued (the same ``stack_id`` in the
same database part, see rocpd.export._activity). TrackEvent slices must nest on a track, so a
slice that overlaps its neighbour without nesting goes to an extra "(overlap N)" track under the
same parent instead of being cut.
Timestamps stay nanoseconds on CLOCK_BOOTTIME, the clock Perfetto assumes by default.

ROCm's convert options: ``agent_index`` (the number in a GPU's label, "GPU 0" per type by
default, see rocpd.export._activity.gpu_activity), ``group_by_queue`` (GPU work on one track per
queue instead of per stream) and the Perfetto buffer settings
(:mod:`rocpd.export._perfetto_buffer`: a size limit honoured by its fill policy; the SDK's
backend and shared-memory hint recorded in the trace's config).
"""

from __future__ import annotations

from ..counters.metrics import source_rows
from ..errors import RocpdError
from ..io.filters import Filter, resolve
from ..progress import Bar, iterate
from . import _activity as act
from ._perfetto_buffer import Budget, config_packet

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".pftrace", "target": "file", "aliases": ["pftrace"], "rocprofv3": "pftrace",
          "label": "Perfetto"}

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


def write(db, path: str, agent_index: str = act.LABEL_INDEX, group_by_queue: bool = False,
          buffer_size_kb: int | None = None, buffer_fill_policy: str = "discard",
          backend: str | None = None, shmem_size_hint_kb: int | None = None, **filters) -> str:
    pb, Builder = _pb()
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    tracks = _Tracks()
    per_track: dict[int, list] = {}  # track uuid -> [(start, end, name, category, stack, out, in)]
    points: list[tuple] = []  # (ts, track uuid, "C" counter value | "I" instant, payload)
    flow_ids: dict[tuple, int] = {}

    def flow(guid, stack):
        return flow_ids.setdefault((guid, stack), len(flow_ids) + 1)

    for f in iterate(db.sources(), "reading"):
        procs = {}
        for guid, pid, cmd in f.conn.execute("SELECT guid, pid, command FROM rocpd_info_process"):
            procs[(guid, pid)] = tracks.get(("p", guid, pid), kind="process", pid=pid,
                                            name=f"{cmd or 'process'} ({pid})")
        names = {(g, p, t): n for g, p, t, n in f.conn.execute(
            "SELECT guid, pid, tid, name FROM rocpd_info_thread")}
        labels = act.agent_labels(f.conn, agent_index)  # (guid, absolute index) -> (label, product)
        products = {(g, label): product for (g, _a), (label, product) in labels.items()}

        def proc(guid, pid, procs=procs):
            if (guid, pid) not in procs:
                procs[(guid, pid)] = tracks.get(("p", guid, pid), kind="process", pid=pid,
                                                name=f"process ({pid})")
            return procs[(guid, pid)]

        def thread(guid, pid, tid, names=names):
            return tracks.get(("t", guid, pid, tid), proc(guid, pid), kind="thread", pid=pid,
                              tid=tid, name=names.get((guid, pid, tid)) or f"thread {tid}")

        def gpu(guid, pid, label, products=products):
            product = products.get((guid, label))
            return tracks.get(("g", guid, pid, label), proc(guid, pid),
                              name=label + (f" ({product})" if product else ""))

        for guid, cat, name, pid, tid, stack, start, end in act.regions(f.conn, where, params):
            is_marker = bool(cat and cat.startswith("MARKER"))
            out = (guid, stack) if stack and not is_marker else None
            per_track.setdefault(thread(guid, pid, tid), []).append(
                (start, end, name, cat or "", stack, out, None))
        for guid, cat, name, pid, tid, ts in act.marks(f.conn, where, params):
            points.append((ts, thread(guid, pid, tid), "I", (name or "(mark)", cat or "")))

        lane = "Queue" if group_by_queue else "Stream"
        for kind, guid, name, pid, _a, label, sid, stream, stack, start, end in \
                act.gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue):
            s = tracks.get(("s", guid, pid, label, sid), gpu(guid, pid, label),
                           name=stream or f"{lane} {sid}")
            inn = (guid, stack) if stack else None
            per_track.setdefault(s, []).append((start, end, name or "(unknown)", kind, stack,
                                                None, inn))

        for guid, pid, label, ts, total in act.allocations(f.conn, where, params, agent_index):
            c = tracks.get(("alloc", guid, pid, label), gpu(guid, pid, label), kind="counter",
                           name=f"Allocated bytes ({label})", units="bytes")
            points.append((ts, c, "C", float(total)))
        for guid, pid, label, counter, start, end, value in act.counter_values(
                f.conn, where, params, agent_index):
            c = tracks.get(("pmc", guid, pid, label, counter), gpu(guid, pid, label),
                           kind="counter", name=f"PMC {counter}", units="")
            points += [(start, c, "C", float(value or 0.0)), (end, c, "C", 0.0)]

        for guid, pid, ts, value, track, units, a_type, a_index in source_rows(f.conn, where,
                                                                                params):
            label = labels.get((guid, a_index), (f"GPU {a_index}",))[0]
            parent = gpu(guid, pid, label) if a_type == "GPU" else proc(guid, pid)
            c = tracks.get(("c", guid, pid, track), parent, kind="counter", name=track,
                           units=units or "")
            points.append((ts, c, "C", value))

    # Only draw flows whose both ends exist (an API call may launch something filtered out).
    ends = {x[6] for sl in per_track.values() for x in sl if x[6] is not None}
    linked = {x[5] for sl in per_track.values() for x in sl if x[5] is not None} & ends
    key_of = {v: k for k, v in tracks.uuid.items()}

    events = []  # (ts, order, track uuid, "B" | "E" | "C" | "I", payload)
    seq = 0
    for uuid in list(per_track):
        for lane, evs in _lanes(per_track[uuid]):
            t = uuid
            if lane:
                t = tracks.get(("overlap", key_of[uuid], lane), uuid, name=f"(overlap {lane})")
            for ts, begin, s in evs:
                events.append((ts, seq, t, "B" if begin else "E", s))
                seq += 1
    for ts, track, what, payload in points:
        events.append((ts, seq, track, what, payload))
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
        _descriptors(b, pb, tracks)
        fh.events()
        bar = Bar(len(events), "writing")
        for i, (ts, _, track, what, s) in enumerate(events):
            if i % 65536 == 0:
                bar.tick(i)
            p = b.create_packet()
            p.trusted_packet_sequence_id = _SEQ
            p.timestamp = ts
            e = p.track_event
            e.track_uuid = track
            if what == "C":
                e.type = pb.TrackEvent.TYPE_COUNTER
                e.double_counter_value = s
            elif what == "I":
                e.type = pb.TrackEvent.TYPE_INSTANT
                e.name = s[0]
                if s[1]:
                    e.categories.append(s[1])
            elif what == "B":
                start, end, name, cat, stack, out, inn = s
                e.type = pb.TrackEvent.TYPE_SLICE_BEGIN
                e.name = name
                if cat:
                    e.categories.append(cat)
                if stack:
                    a = e.debug_annotations.add()
                    a.name = "corr_id"
                    a.int_value = stack
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


def _descriptors(b, pb, tracks: _Tracks) -> None:
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
