"""Perfetto protobuf trace (ui.perfetto.dev, trace_processor): the config, track descriptors and
CPU-profile packets built with the ``perfetto`` package's trace builder and its generated protos;
the events (slices, instants, counter values: nearly every packet) encoded a chunk at a time by
_perfetto_packets, byte for byte what the builder would write for them, at a fraction of its
cost per packet.

Tracks: one per process (ProcessDescriptor) and per CPU thread (ThreadDescriptor); under each
process one track per GPU agent and under it one per stream. Slices: regions (API calls, ROCTx
ranges, nested as recorded) on their thread; kernels and copies on their stream (a copy under
the GPU taking part in it); scratch-memory operations on a "Scratch memory" track under their
GPU. ROCTx marks and every other sample are instant events on their thread, as ROCm's writer
draws them; call-stack samples also as Perfetto's CPU-profile samples (_perfetto_samples).
Counter tracks: the
bytes allocated on each GPU ("Allocated bytes (GPU 0)": the runtime's allocations; PyTorch's
caching allocator as "Torch allocated bytes (GPU 0)" and "Torch reserved bytes (GPU 0)"), each hardware counter of the dispatches
("PMC <name>", its value while the dispatch runs) under the GPU track, and sampled counters
(device and host metrics, ``--process-freq``) named as their rocpd track ("device_busy_gfx
[0]"), with their units: a GPU's under its GPU track, the host's and process's under the
process. A flow joins an API call to the kernel or copy it enqueued (the same ``stack_id`` in the
same database part, see rocpd.export._activity). TrackEvent slices must nest on a track, so a
slice that overlaps its neighbour without nesting goes to an extra "(overlap N)" track under the
same parent instead of being cut.
Timestamps stay nanoseconds on CLOCK_BOOTTIME, the clock Perfetto assumes by default.
Memory: the records are held as columns of integers and their names as one UTF-8 buffer until
their packets are written in time order (a million ranges with distinct names: ~230 MB at the
peak, of which ~70 MB is the interpreter with numpy and pandas).

ROCm's convert options: ``agent_index`` (the number in a GPU's label, "GPU 0" per type by
default, see rocpd.export._activity.gpu_activity), ``group_by_queue`` (GPU work on one track per
queue instead of per stream) and the Perfetto buffer settings
(:mod:`rocpd.export._perfetto_buffer`: a size limit honoured by its fill policy; the SDK's
backend and shared-memory hint recorded in the trace's config).
"""

from __future__ import annotations

from array import array

import numpy as np

from ..device_metrics.samples import source_rows
from ..errors import RocpdError
from ..io.filters import Filter, resolve
from ..io.output_file import open_output
from ..progress import Bar, iterate
from . import _activity as act
from ._perfetto_buffer import Budget, config_packet
from ._perfetto_gpu import Held, open_stream
from ._perfetto_lanes import held_lanes as _lanes
from ._perfetto_merge import flow_uses, merged_events
from ._perfetto_packets import Encoder
from ._perfetto_regions import RegionStream, open_regions
from ._perfetto_samples import Profile
from ._perfetto_tracks import Tracks, write_descriptors

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


class _Text:
    """Strings kept as UTF-8 in one buffer, each a number: a million distinct range names take
    their bytes and 8 more each (as Python strings, ~60 more). A name seen before (a kernel's, an
    API call's) is stored once while the table of names seen is small."""

    _SEEN = 1 << 12

    def __init__(self):
        self.buf = bytearray()
        self.ends = array("q")
        self.seen: dict[str, int] = {}
        self.code("")  # code 0: no text (a slice without category)

    def code(self, s: str) -> int:
        c = self.seen.get(s)
        if c is None:
            self.buf += s.encode("utf-8", "surrogatepass")
            self.ends.append(len(self.buf))
            c = len(self.ends) - 1
            if len(self.seen) < self._SEEN:
                self.seen[s] = c
        return c

    def __getitem__(self, c: int) -> str:
        return self.buf[self.ends[c - 1] if c else 0:self.ends[c]].decode("utf-8", "surrogatepass")


class _Records:
    """Every slice and instant as columns, a few integers each: a trace can hold millions, where
    a tuple per record with its own strings takes several hundred bytes."""

    def __init__(self):
        self.text = _Text()
        self.start, self.end, self.stack = array("q"), array("q"), array("q")
        self.name, self.cat = array("q"), array("q")
        self.part = array("i")  # the database part (guid) a flow's stack_id belongs to
        self.flow = array("b")  # _OUT: may start a flow (an API call); _IN: may end one (GPU work)
        self.parts: dict[str, int] = {}

    def add(self, start, end, name, cat, stack, guid, flow) -> int:
        self.start.append(start)
        self.end.append(end)
        self.name.append(self.text.code(name))
        self.cat.append(self.text.code(cat))
        self.stack.append(stack or 0)
        self.part.append(self.parts.setdefault(guid, len(self.parts)))
        self.flow.append(flow if stack else 0)
        return len(self.start) - 1

    def linked(self, ins: dict | None = None, outs: dict | None = None) -> np.ndarray:
        """Each record's flow end, kept only where both ends exist (an API call may launch
        something filtered out): _OUT, _IN or 0. ``ins``, ``outs``: part -> stack ids of
        flows' ends, starts not among the records (streamed kernels', API calls')."""
        flow = np.frombuffer(self.flow, dtype=np.int8)
        if not flow.any():
            return flow
        stack = np.frombuffer(self.stack, dtype=np.int64)
        part = np.frombuffer(self.part, dtype=np.int32)
        keep = np.zeros(len(flow), dtype=bool)
        for p in range(len(self.parts)):
            mine = (part == p) & (flow != 0)
            ends = stack[mine & (flow == _IN)]
            if ins and p in ins:
                ends = np.concatenate([ends, ins[p]])
            starts = stack[mine & (flow == _OUT)]
            if outs and p in outs:
                starts = np.concatenate([starts, outs[p]])
            both = np.intersect1d(starts, ends)
            keep |= mine & np.isin(stack, both)
        return np.where(keep, flow, 0).astype(np.int8)


_OUT, _IN = 1, 2
_ENCODE = 1 << 10  # events encoded at a time (_perfetto_packets; ~500 bytes of arrays each)


def write(db, path: str, agent_index: str = act.LABEL_INDEX, group_by_queue: bool = False,
          buffer_size_kb: int | None = None, buffer_fill_policy: str = "discard",
          backend: str | None = None, shmem_size_hint_kb: int | None = None,
          stream: bool = True, **filters) -> str:
    """``stream``: the kernels streamed where that gives the same trace (_perfetto_gpu), else
    held; False: always held."""
    args = (db, path, agent_index, group_by_queue, buffer_size_kb, buffer_fill_policy, backend,
            shmem_size_hint_kb, filters)
    if stream:
        try:
            return _write(*args, streamed=True)
        except Held:  # found in the first pass, before anything is written
            pass
    return _write(*args, streamed=False)


def _write(db, path, agent_index, group_by_queue, buffer_size_kb, buffer_fill_policy, backend,
           shmem_size_hint_kb, filters, streamed: bool) -> str:
    pb, Builder = _pb()
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    streams = []  # a file's kernels streamed (_perfetto_gpu), where that gives the same trace
    tracks = Tracks()
    rec = _Records()
    profile = Profile()  # call-stack samples, also as Perfetto's CPU-profile packets
    per_track: dict[int, array] = {}  # track uuid -> its slices (record numbers)
    # Counter values and instants: time, track and code (see _events); counter values in ``values``.
    p_ts, p_track, p_code, values = array("q"), array("q"), array("q"), array("d")

    instants: dict[tuple, int] = {}  # (name, category, guid) -> the record instants share

    def instant(ts, track, name, cat, guid):
        """An instant event: its time is the point's own, so instants of one name, category
        and part share a record (a sample's record took 45 bytes of each sample's ~100)."""
        point(ts, track, record=instant_record(ts, name, cat, guid))

    def instant_record(ts, name, cat, guid) -> int:
        key = (name, cat, guid)
        r = instants.get(key)
        if r is None:
            r = instants[key] = rec.add(ts, ts, name, cat, 0, guid, 0)
        return r

    def point(ts, track, value=0.0, record=None):
        p_ts.append(ts)
        p_track.append(track)
        if record is None:
            p_code.append(-1 - 2 * len(values))
            values.append(value)
        else:
            p_code.append(-2 - 2 * record)

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

        def slice_on(track, *record):
            if track not in per_track:
                per_track[track] = array("q")
            per_track[track].append(rec.add(*record))

        rs = open_regions(f, where, params, len(db.sources())) if streamed else None
        if rs is not None:
            rs.part = rec.parts.setdefault(rs.guid, len(rec.parts))
            rs.first_pass(thread, per_track, rec.text)
            streams.append(rs)
        for guid, cat, name, pid, tid, stack, start, end in \
                (() if rs is not None else act.regions(f.conn, where, params)):
            is_marker = bool(cat and cat.startswith("MARKER"))
            slice_on(thread(guid, pid, tid), start, end, name or "", cat or "", stack, guid,
                     0 if is_marker else _OUT)
        for guid, cat, name, pid, tid, ts in act.marks(f.conn, where, params):
            instant(ts, thread(guid, pid, tid), name or "(mark)", cat or "", guid)
        # What a sample makes (its track, record, and thread and stack numbers) is made once
        # per distinct sample; its frames are one held tuple per stack of this file's.
        made: dict[tuple, tuple] = {}
        for guid, cat, name, pid, tid, ts, frames in act.samples(f.conn, where, params):
            key = (guid, cat, name, pid, tid, id(frames))
            got = made.get(key)
            if got is None:
                got = made[key] = (thread(guid, pid, tid),
                                   instant_record(ts, name, cat or "", guid),
                                   profile.numbers(pid, tid, frames) if frames else None,
                                   frames)  # holds the tuple whose id is in the key
            point(ts, got[0], record=got[1])
            if got[2] is not None:
                profile.add_numbered(ts, *got[2])

        lane = "Queue" if group_by_queue else "Stream"
        gs = open_stream(f, where, params, flt, agent_index, group_by_queue,
                         len(db.sources())) if streamed else None
        if gs is not None:
            if any(type(s) is type(gs) and s.guid == gs.guid for s in streams):
                raise Held  # one part given twice: its kernels would interleave
            gs.part = rec.parts.setdefault(gs.guid, len(rec.parts))
            # (copies: a view of the records' arrays would stop them growing for the next file)
            mine = (np.frombuffer(rec.part, dtype=np.int32) == gs.part) \
                & (np.frombuffer(rec.flow, dtype=np.int8) == _OUT)
            outs = np.frombuffer(rec.stack, dtype=np.int64)[mine]
            if rs is not None:  # the streamed API calls' stack ids
                outs = np.concatenate([outs, rs.linked])
            gs.first_pass(tracks, gpu, per_track, rec.text, outs)
            streams.append(gs)
        for kind, guid, name, pid, _a, label, sid, stream, stack, start, end in \
                (() if gs is not None else
                 act.gpu_activity(f.conn, where, params, flt, agent_index, group_by_queue)):
            s = tracks.get(("s", guid, pid, label, sid), gpu(guid, pid, label),
                           name=stream or f"{lane} {sid}")
            slice_on(s, start, end, name or "(unknown)", kind, stack, guid, _IN)

        for guid, pid, label, op, start, end, _size in act.scratch(f.conn, where, params,
                                                                    agent_index):
            s = tracks.get(("scratch", guid, pid, label), gpu(guid, pid, label),
                           name="Scratch memory")
            slice_on(s, start, end, op, "SCRATCH_MEMORY", 0, guid, 0)
        for guid, pid, label, ts, total in act.allocations(f.conn, where, params, agent_index):
            c = tracks.get(("alloc", guid, pid, label), gpu(guid, pid, label), kind="counter",
                           name=f"Allocated bytes ({label})", units="bytes")
            point(ts, c, float(total))
        for guid, pid, label, ts, allocated, reserved in act.allocator_totals(f.conn, where, params,
                                                                             agent_index):
            for what, value in (("allocated", allocated), ("reserved", reserved)):
                c = tracks.get(("torch", what, guid, pid, label), gpu(guid, pid, label),
                               kind="counter", name=f"Torch {what} bytes ({label})", units="bytes")
                point(ts, c, float(value))
        for guid, pid, label, counter, start, end, value in act.counter_values(
                f.conn, where, params, agent_index):
            c = tracks.get(("pmc", guid, pid, label, counter), gpu(guid, pid, label),
                           kind="counter", name=f"PMC {counter}", units="")
            point(start, c, float(value or 0.0))
            point(end, c, 0.0)

        for guid, pid, ts, value, track, units, a_type, a_index in source_rows(f.conn, where,
                                                                                params):
            label = labels.get((guid, a_index), (f"GPU {a_index}",))[0]
            parent = gpu(guid, pid, label) if a_type == "GPU" else proc(guid, pid)
            c = tracks.get(("c", guid, pid, track), parent, kind="counter", name=track,
                           units=units or "")
            point(ts, c, value)

    gpu_ins = {gs.part: gs.linked for gs in streams if not isinstance(gs, RegionStream)}
    api_outs = {rs.part: rs.linked for rs in streams if isinstance(rs, RegionStream)}
    flow = rec.linked(gpu_ins, api_outs).tobytes()
    for rs in streams:  # a streamed API call starts a flow where a kernel or copy ends it
        if isinstance(rs, RegionStream):
            held_in = np.frombuffer(rec.stack, dtype=np.int64)[
                (np.frombuffer(rec.part, dtype=np.int32) == rs.part)
                & (np.frombuffer(rec.flow, dtype=np.int8) == _IN)]
            rs.both = np.concatenate([held_in, gpu_ins.get(rs.part, np.zeros(0, np.int64))])
    points = [p_ts, p_track, p_code]
    p_ts = p_track = p_code = None  # the events take these over (and let each go once copied)
    ts, track, code, rank, order = _events(tracks, rec, per_track, points, streams)
    per_track = None
    rec.start = rec.end = None
    enc = Encoder(rec.text, rec.name, rec.cat, rec.stack, rec.part, flow, values)
    if streams:  # flows' ids held only while open
        enc.forget_after(flow_uses(rec.stack, rec.part, flow, streams))

    with open_output(path, "wb") as raw:
        fh = Budget(raw, buffer_size_kb, buffer_fill_policy)
        b = Builder(fh)
        if buffer_size_kb is not None or buffer_fill_policy != "discard" or backend is not None \
                or shmem_size_hint_kb is not None:
            p = b.create_packet()
            config_packet(p, buffer_size_kb, buffer_fill_policy, backend, shmem_size_hint_kb)
            b.write_packet(p)
        write_descriptors(b, pb, tracks, _SEQ)
        fh.events()
        if any(gs.count for gs in streams):
            merged_events(fh, enc, streams, ts, track, code, rank, order)
        else:
            bar = Bar(len(ts), "writing")
            for k in range(0, len(ts), _ENCODE):
                bar.tick(k)
                o = order[k:k + _ENCODE]
                fh.write_many(*enc.encode(ts[o], track[o], code[o]))
            bar.tick(len(ts))
        ts = track = code = rank = order = None  # written: the samples' packets need the room
        profile.write(b, pb, _SEQ, fh)
        fh.finish(path)
    return path


def _events(tracks: Tracks, rec: _Records, per_track: dict, points: list, streams=()):
    """Every event: (times, track uuids, codes, the place of its track among those with
    slices) and the order to write them in, by time, ties in
    the order of tracks, lanes and events within a lane, counter values and instants after the
    slices (a stable sort). A slice's code is 2 * its record number + 1 for its begin, + 0 for
    its end; a counter value's -1 - 2 * its number in the values; an instant's -2 - 2 * its
    record number. A slice that does not nest in its track goes to an "(overlap N)" track under
    it. ``streams``: the streamed kernels (rocpd.export._perfetto_gpu), whose tracks' "(overlap
    N)" tracks are made here, in the same place."""
    streamed = {u: gs for gs in streams for u in gs.rank}
    start = np.frombuffer(rec.start, dtype=np.int64)
    end = np.frombuffer(rec.end, dtype=np.int64)
    n = 2 * sum(len(r) for r in per_track.values()) + len(points[0])
    ts, track, code, rank = (np.empty(n, dtype=np.int64) for _ in range(4))
    key_of = {v: k for k, v in tracks.uuid.items()}
    at = 0
    for r, (uuid, records) in enumerate(per_track.items()):
        a0 = at
        idx = np.frombuffer(records, dtype=np.int64)
        for lane, (t, c) in enumerate(_lanes(start[idx], end[idx], idx)):
            u = tracks.get(("overlap", key_of[uuid], lane), uuid, name=f"(overlap {lane})") \
                if lane else uuid
            ts[at:at + len(t)] = np.frombuffer(t, dtype=np.int64)
            code[at:at + len(c)] = np.frombuffer(c, dtype=np.int64)
            track[at:at + len(c)] = u
            at += len(c)
        gs = streamed.get(uuid)
        if gs is not None:  # streamed: its lanes were swept in the first pass
            for lane in range(1, gs.lanes.lanes(uuid)):
                gs.overlap[(uuid, lane)] = tracks.get(("overlap", key_of[uuid], lane), uuid,
                                                      name=f"(overlap {lane})")
        rank[a0:at] = r
    for i, out in enumerate((ts, track, code)):
        out[at:] = np.frombuffer(points[i], dtype=np.int64)
        points[i] = None  # copied: the caller holds it no more
    rank[at:] = len(per_track)  # instants and counter values after every slice
    return ts, track, code, rank, np.argsort(ts, kind="stable")
