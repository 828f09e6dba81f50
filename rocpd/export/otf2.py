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

import numpy as np

from ..errors import RocpdError
from ..io.filters import Filter, resolve
from ..progress import iterate
from . import _activity as act
from .perfetto import _lanes

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


# Categories of what is not an API call; the GPU side takes the paradigm of the process's API.
_KERNEL, _COPY, _MARK = "KERNEL_DISPATCH", "MEMORY_COPY", "MARK"
_ALLOC = {"ALLOC": "MEMORY_ALLOCATION_ALLOCATE", "REALLOC": "MEMORY_ALLOCATION_REALLOCATE",
          "FREE": "MEMORY_ALLOCATION_FREE"}
# A call-stack sample on its thread: (time, time, frames, _SAMPLE), written as a
# CallingContextSample of the calling context of its frames (OTF2's sampling events).
_SAMPLE = "SAMPLE"
# Scratch-memory operations (category SCRATCH_MEMORY), by the allocation role of each.
_SCRATCH = "SCRATCH_MEMORY"
_SCRATCH_ROLE = {"SCRATCH_MEMORY_ALLOC": "ALLOC", "SCRATCH_MEMORY_FREE": "FREE",
                 "SCRATCH_MEMORY_RECLAIM": "FREE"}


def collect(db, agent_index: str = act.LABEL_INDEX, **filters):
    """{(location key): (group key, location name, is_gpu, [(start, end, name, category)])} and
    {group key: (host, group name, parent group key or None, GPU paradigm)}. Location names are
    unique in the archive: a name two locations share gets its process and thread (or GPU).
    ``agent_index``: ROCm's agent naming (rocpd.export.AGENT_INDEX)."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    locations: dict[tuple, list] = {}
    groups: dict[tuple, list] = {}
    for f in iterate(db.sources(), "reading"):
        hosts = {g: h for g, h in f.conn.execute("SELECT guid, hostname FROM rocpd_info_node")}
        cmds = {(g, p): c for g, p, c in f.conn.execute("SELECT guid, pid, command FROM rocpd_info_process")}
        tnames = {(g, p, t): n for g, p, t, n in f.conn.execute("SELECT guid, pid, tid, name FROM rocpd_info_thread")}

        def group(guid, pid, hosts=hosts, cmds=cmds):
            key = ("p", guid, pid)
            if key not in groups:
                groups[key] = [hosts.get(guid) or "host", f"{cmds.get((guid, pid)) or 'process'} ({pid})",
                               None, None]
            return key

        def thread(guid, pid, tid, suffix="", tnames=tnames):
            name = (tnames.get((guid, pid, tid)) or f"Thread {tid}") + suffix
            return locations.setdefault(("t", guid, pid, tid, suffix),
                                        [group(guid, pid), name, False, [], f"pid {pid} tid {tid}"])

        for guid, cat, name, pid, tid, _stack, start, end in act.regions(f.conn, where, params):
            thread(guid, pid, tid)[3].append((start, end, name or "(unknown)", cat))
            api = (cat or "").upper()
            if api.startswith(("HIP", "HSA", "CUDA")) and groups[group(guid, pid)][3] is None:
                groups[group(guid, pid)][3] = "CUDA" if api.startswith("CUDA") else "HIP"
        for guid, _cat, name, pid, tid, ts in act.marks(f.conn, where, params):
            thread(guid, pid, tid)[3].append((ts, ts, name or "(mark)", _MARK))
        for guid, _cat, name, pid, tid, ts, frames in act.samples(f.conn, where, params):
            thread(guid, pid, tid)[3].append((ts, ts, frames, _SAMPLE) if frames else
                                             (ts, ts, name, _MARK))
        for guid, pid, typ, start, end, tid in f.conn.execute(
                f'SELECT guid, pid, type, start, "end", tid FROM memory_allocations WHERE {where}'
                " AND level IS NOT 'SCRATCH'", params):
            if typ in _ALLOC:
                thread(guid, pid, tid, ", memory")[3].append((start, end, _ALLOC[typ], typ))
        for kind, guid, name, pid, _a, label, sid, stream, _s, start, end in \
                act.gpu_activity(f.conn, where, params, flt, agent_index):
            p = group(guid, pid)
            g = ("g", guid, pid, label)
            groups.setdefault(g, [groups[p][0], f"{label} ({pid})", p, None])
            loc = locations.setdefault(("s", guid, pid, label, sid),
                                       [g, stream or f"Stream {sid}", True, [], f"pid {pid} {label}"])
            loc[3].append((start, end, name or "(unknown)", _KERNEL if kind == "kernel" else _COPY))
        for guid, pid, label, op, start, end, _size in act.scratch(f.conn, where, params,
                                                                    agent_index):
            p = group(guid, pid)
            g = ("g", guid, pid, label)
            groups.setdefault(g, [groups[p][0], f"{label} ({pid})", p, None])
            loc = locations.setdefault(("scratch", guid, pid, label),
                                       [g, "Scratch memory", True, [], f"pid {pid} {label}"])
            loc[3].append((start, end, op, _SCRATCH))
    seen: dict[str, int] = {}
    for loc in locations.values():
        seen[loc[1]] = seen.get(loc[1], 0) + 1
    for loc in locations.values():
        if seen[loc[1]] > 1:
            loc[1] = f"{loc[1]} [{loc[4]}]"
    return {k: tuple(v[:4]) for k, v in locations.items()}, {k: tuple(v) for k, v in groups.items()}


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
        self.generator = defs.interrupt_generator(
            "rocprof sampler", interrupt_generator_mode=otf2.InterruptGeneratorMode.TIME,
            period=period)

    def of(self, frames):
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


def write(db, path: str, archive_name: str = "traces", overwrite: bool = True,
          shared: bool = False, agent_index: str = act.LABEL_INDEX, **filters) -> str:
    """Write the OTF2 archive ``archive_name`` into folder ``path`` (which must hold nothing else,
    unless ``shared``); returns the path of the archive's .otf2 file."""
    otf2 = _otf2()
    locations, groups = collect(db, agent_index, **filters)
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
                role = {_KERNEL: otf2.RegionRole.KERNEL, _COPY: otf2.RegionRole.DATA_TRANSFER,
                        "ALLOC": otf2.RegionRole.ALLOCATE, "REALLOC": otf2.RegionRole.REALLOCATE,
                        "FREE": otf2.RegionRole.DEALLOCATE, _MARK: otf2.RegionRole.ARTIFICIAL
                        }.get(_SCRATCH_ROLE.get(name, "") if cat == _SCRATCH else cat)
                if cat == _MARK:  # a ROCTx mark: a zero-length region of the user's
                    paradigm = otf2.Paradigm.USER
                elif role is None:
                    paradigm, role = _paradigm(otf2, cat)
                regions[key] = defs.region(name, description=cat or "", region_role=role,
                                           paradigm=paradigm)
            return regions[key]

        contexts = _Contexts(otf2, defs, _sampling_period(db))
        for _key, (gkey, name, is_gpu, slices) in iterate(sorted(locations.items(), key=lambda kv: str(kv[0])),
                                                         "writing", len(locations)):
            kind = otf2.LocationType.ACCELERATOR_STREAM if is_gpu else otf2.LocationType.CPU_THREAD
            process = gkey if groups[gkey][2] is None else groups[gkey][2]
            gpu_paradigm = groups[process][3]
            samples = [(s[0], s[2]) for s in slices if s[3] == _SAMPLE]
            slices = [s for s in slices if s[3] != _SAMPLE]
            starts = np.array([s[0] for s in slices], dtype=np.int64)
            ends = np.array([s[1] for s in slices], dtype=np.int64)
            for lane, (times, codes) in enumerate(list(_lanes(starts, ends)) or [([], [])]):
                label = name if lane == 0 else f"{name} (overlap {lane})"
                writer = trace.event_writer(label, type=kind, group=group_defs[gkey])
                events = [(int(ts), 0, int(code)) for ts, code in zip(times, codes, strict=True)]
                if lane == 0:  # the samples, in time order among the slices' events
                    events = sorted(events + [(ts, 1, i) for i, (ts, _) in enumerate(samples)],
                                    key=lambda e: e[0])
                for ts, is_sample, code in events:
                    if is_sample:
                        writer.calling_context_sample(ts, contexts.of(samples[code][1]), 1,
                                                      contexts.generator)
                        continue
                    _, _, rname, cat = slices[code >> 1]
                    if code & 1:
                        writer.enter(ts, region(rname, cat, gpu_paradigm))
                    else:
                        writer.leave(ts, region(rname, cat, gpu_paradigm))
    return os.path.join(path, f"{archive_name}.otf2")
