"""OTF2 archive (Score-P's format: Vampir, Scalasca, otf2-print), written with the ``otf2`` package.

System tree: machine -> host -> one location group per process, with one accelerator group per
GPU agent under it. Locations: one CPU thread per recorded thread (API calls, ROCTx ranges; ROCTx
marks as zero-length regions, role ARTIFICIAL), one per thread that allocated memory
("<thread>, memory": ALLOCATE/DEALLOCATE regions), one accelerator stream per GPU stream
(kernels, copies; a copy under the GPU taking part in it) and one "Scratch memory" per GPU with
scratch-memory operations (ALLOCATE, DEALLOCATE for frees and reclaims); no two share a name.
Call-stack samples are CallingContextSample events on their thread, each naming the calling
context of its frames (a region per frame, paradigm SAMPLING); other samples are zero-length
regions there, as ROCTx marks are. GPU work and
allocations take the paradigm of the process's API calls (HIP for HIP/HSA, CUDA). OTF2 needs
Enter/Leave to nest on a location,
so a slice that overlaps its neighbour without nesting goes to an extra "(overlap N)" location,
as in the Perfetto export. Timer resolution is 1 ns (CLOCK_BOOTTIME). ``path`` is the archive's
directory; the anchor file is ``<path>/<archive_name>.otf2``.
"""

from __future__ import annotations

import os
import shutil

from ..errors import RocpdError
from ..io.filters import Filter, resolve
from ..progress import Rows, iterate
from . import _activity as act
from . import _otf2_events as ev
from ._otf2_locations import Layout

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".otf2", "target": "folder", "rocprofv3": "otf2"}


def _otf2():
    try:
        import otf2
    except ImportError:
        raise RocpdError("OTF2 export needs the 'otf2' package (pip install otf2)") from None
    return otf2


def _paradigm(otf2, category: str | None):
    """(paradigm, role) of an API call or ROCTx range by its category. OTF2 has no HSA paradigm:
    HSA calls are HIP's, as ROCm's OTF2 writer files them."""
    c = (category or "").upper()
    if c.startswith("MARKER") or c.startswith("ROCTX"):
        return otf2.Paradigm.USER, otf2.RegionRole.CODE
    if c.startswith(("HIP", "HSA")):
        return otf2.Paradigm.HIP, otf2.RegionRole.FUNCTION
    if c.startswith("CUDA"):
        return otf2.Paradigm.CUDA, otf2.RegionRole.FUNCTION
    return otf2.Paradigm.UNKNOWN, otf2.RegionRole.FUNCTION


# Scratch-memory operations, by the allocation role of each.
_SCRATCH_ROLE = {"SCRATCH_MEMORY_ALLOC": "ALLOC", "SCRATCH_MEMORY_FREE": "FREE",
                 "SCRATCH_MEMORY_RECLAIM": "FREE"}


def _sampling_period(db) -> int:
    """The sampler's interval in ns (rocprof.sampling.hz of the first file recording one), or 0."""
    for _guid, tag, value in db.metadata():
        if tag == "rocprof.sampling.hz" and str(value).isdigit() and int(value) > 0:
            return 1_000_000_000 // int(value)
    return 0


class _Contexts:
    """OTF2 calling contexts of call stacks (a region per frame, paradigm SAMPLING, with its
    source location), each context the frame's under its caller's, and the one interrupt
    generator (the sampler's timer) the samples name."""

    def __init__(self, otf2, defs, period: int):
        self.otf2, self.defs = otf2, defs
        self.ctx: dict[tuple, object] = {}
        self.regions: dict[object, object] = {}
        # A stack's frames come as one held tuple per stack (rocpd.summary.samples.Stacks): its
        # context found once, by the tuple's id (the tuple kept, so that its id is not reused).
        self.leaf: dict[int, tuple] = {}
        self.generator = defs.interrupt_generator(
            "rocprof sampler", interrupt_generator_mode=otf2.InterruptGeneratorMode.TIME,
            period=period)

    def of(self, frames):
        got = self.leaf.get(id(frames))
        if got is not None and got[0] is frames:
            return got[1]
        self.leaf[id(frames)] = (frames, context := self._of(frames))
        return context

    def _of(self, frames):
        parent = None
        for depth in range(len(frames)):
            key = tuple(frames[:depth + 1])
            if key not in self.ctx:
                f = frames[depth]
                if f not in self.regions:
                    self.regions[f] = self.defs.region(
                        f.function, source_file=f.file, begin_line_number=f.line,
                        description=f"{f.kind} frame", region_role=self.otf2.RegionRole.FUNCTION,
                        paradigm=self.otf2.Paradigm.SAMPLING)
                self.ctx[key] = self.defs.calling_context(
                    self.regions[f], self.defs.source_code_location(f.file, f.line), parent)
            parent = self.ctx[key]
        return parent


def _clear(path: str, archive_name: str, overwrite: bool, shared: bool = False) -> None:
    """Remove a previous archive of the same name, and only that: never a directory with other
    files, unless ``shared`` (ROCm's layout: the archive beside other outputs in one folder)."""
    if not os.path.exists(path):
        return
    if not os.path.isdir(path):
        raise RocpdError("output exists and is not a directory", path)
    ours = {f"{archive_name}.otf2", f"{archive_name}.def", archive_name}
    present = set(os.listdir(path))
    if present & ours and not overwrite:
        raise RocpdError("an OTF2 archive is already there", path)
    if present - ours and not shared:
        raise RocpdError("output directory holds other files; give a new or empty directory", path)
    for name in present & ours:
        full = os.path.join(path, name)
        shutil.rmtree(full) if os.path.isdir(full) else os.unlink(full)
    if not os.listdir(path):
        os.rmdir(path)


def collect(db, agent_index: str = act.LABEL_INDEX, **filters) -> Layout:
    """The archive's locations and location groups (rocpd.export._otf2_locations.Layout) of
    the records the filters keep; ``agent_index``: ROCm's agent naming (AGENT_INDEX)."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    layout = Layout()
    for f in db.sources():
        layout.add_file(f.conn, where, params, flt, agent_index)
    layout.finish()
    return layout


def write(db, path: str, archive_name: str = "traces", overwrite: bool = True,
          shared: bool = False, agent_index: str = act.LABEL_INDEX, **filters) -> str:
    """Write the OTF2 archive ``archive_name`` into folder ``path`` (which must hold nothing else,
    unless ``shared``); returns the path of the archive's .otf2 file. Streamed: the locations
    are found first (SQL aggregates), then each file's records are written as they are read."""
    otf2 = _otf2()
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    layout = collect(db, agent_index, **filters)
    groups = layout.groups
    _clear(path, archive_name, overwrite, shared)
    regions: dict[tuple, object] = {}
    with otf2.writer.open(path, archive_name=archive_name, timer_resolution=1_000_000_000) as trace:
        defs = trace.definitions
        root = defs.system_tree_node("machine")
        host_nodes = {}
        group_defs = {}
        for key, (host, name, parent, _p) in sorted(groups.items(), key=lambda kv: kv[1][2] is not None):
            if host not in host_nodes:
                host_nodes[host] = defs.system_tree_node(host, class_name="node", parent=root)
            if parent is None:
                group_defs[key] = defs.location_group(name, system_tree_parent=host_nodes[host])
            else:
                group_defs[key] = defs.location_group(
                    name, location_group_type=otf2.LocationGroupType.ACCELERATOR,
                    system_tree_parent=host_nodes[host], creating_location_group=group_defs[parent])

        def region(name, cat, gpu_paradigm):
            key = (name, cat, gpu_paradigm)
            if key not in regions:
                paradigm = getattr(otf2.Paradigm, gpu_paradigm or "UNKNOWN")
                role = {ev.KERNEL: otf2.RegionRole.KERNEL, ev.COPY: otf2.RegionRole.DATA_TRANSFER,
                        "ALLOC": otf2.RegionRole.ALLOCATE, "REALLOC": otf2.RegionRole.REALLOCATE,
                        "FREE": otf2.RegionRole.DEALLOCATE, ev.MARK: otf2.RegionRole.ARTIFICIAL
                        }.get(_SCRATCH_ROLE.get(name, "") if cat == ev.SCRATCH else cat)
                if cat == ev.MARK:  # a ROCTx mark: a zero-length region of the user's
                    paradigm = otf2.Paradigm.USER
                elif role is None:
                    paradigm, role = _paradigm(otf2, cat)
                regions[key] = defs.region(name, description=cat or "", region_role=role,
                                           paradigm=paradigm)
            return regions[key]

        contexts = _Contexts(otf2, defs, _sampling_period(db))

        def sample(writer, ts, frames):
            writer.calling_context_sample(ts, contexts.of(frames), 1, contexts.generator)

        def location(gkey, name, is_gpu):
            kind = otf2.LocationType.ACCELERATOR_STREAM if is_gpu else otf2.LocationType.CPU_THREAD
            process = gkey if groups[gkey][2] is None else groups[gkey][2]
            paradigm = groups[process][3]
            return ev.Location(
                lambda lane: trace.event_writer(name if lane == 0 else f"{name} (overlap {lane})",
                                                type=kind, group=group_defs[gkey]),
                lambda rname, cat: region(rname, cat, paradigm), sample)

        # Each location's first lane made in the held writer's order (by key), the rest as met.
        locs = {key: location(gkey, name, is_gpu) for key, (gkey, name, is_gpu, _d)
                in sorted(layout.locations.items(), key=lambda kv: str(kv[0]))}
        for f in iterate(db.sources(), "writing"):
            rows_bar = Rows(f.conn, f"writing {os.path.basename(f.path)}",
                            (*Rows.TABLES, "rocpd_memory_allocate"))
            for start, end, key, what, cat in rows_bar.counted(ev.records(
                    f.conn, where, params, flt, agent_index)):
                if cat == ev.SAMPLE:
                    locs[key].sample(start, what)
                else:
                    locs[key].slice(start, end, what, cat)
            rows_bar.close()
        for loc in locs.values():
            loc.close()
    return os.path.join(path, f"{archive_name}.otf2")
