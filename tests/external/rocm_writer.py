"""A database written the way ROCm's rocprofv3 writes one (TEST HELPER, never used by rocprof).

It follows rocm-systems' projects/rocprofiler-sdk/source/lib/output/generateRocpd.cpp (the commit
named in the external judge's README.md, tests/oracle.py) row for row, with ROCm's own schema SQL:
- the tables from rocpd_tables.sql ({{uuid}} = "_" + guid with "_" for "-"), then rocpd_views,
  data_views, marker_views and summary_views, the indexes last;
- rocpd_string: every string sorted, ids 1..N (metadata::get_string_entries), "" included;
- the node's id is a hash of its machine id; process id = pid, thread id = tid (no name);
- agents keyed by their node id (the CPU agent is node 0), agent_info JSON in extdata;
- streams and queues keyed by their handles: 0 = "Default Stream"/"Default Queue", the n-th
  other "Stream n-1"/"Queue n-1";
- every record's rocpd_event: stack_id = its internal correlation id (an API call and the kernel
  or copy it enqueued share it), parent_stack_id = the ancestor (API calls, allocations) or the
  internal id again (kernels, copies), correlation_id = the *external* id (0 unless set);
- API calls (HIP, HSA, ROCTx) as rocpd_region with id = the internal correlation id, arguments
  in rocpd_arg; a call with start == end (roctxMarkA) as rocpd_sample with that id on the track
  (node, pid, tid, category); ROCTx messages as {"message": ...} in the event's extdata;
- kernels: id = dispatch id, region_name_id = "" (no external correlation id), queue/stream
  handles; PMC values in rocpd_pmc_event against the dispatch's event;
- copies: ids 1.., no queue, no region name; allocations: agent only on ALLOC, queue/stream 0,
  {"flags": n} for scratch.
Events are numbered in ROCm's insertion order: API calls (HIP, HSA, markers), kernels, copies,
allocations.
"""

from __future__ import annotations

import json
import sqlite3
import uuid as uuidlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import oracle

MARKER = "MARKER_CORE_RANGE_API"  # the buffer-tracing kind name of ROCTx at that commit


def _schema(name: str, uuid: str, guid: str) -> str:
    return (oracle.sql() / name).read_text().replace("{{uuid}}", uuid).replace("{{guid}}", guid)


@dataclass
class Agent:
    node_id: int
    type: str  # CPU / GPU
    logical_node_id: int
    type_index: int
    name: str
    product_name: str
    cu_count: int = 0


@dataclass
class _Api:
    category: str
    name: str
    tid: int
    start: int
    end: int
    corr: int
    ancestor: int
    message: str | None
    args: list = field(default_factory=list)


class RocmWriter:
    """Collects records, then writes them in generateRocpd.cpp's order on close()."""

    def __init__(self, path, pid: int = 4242, ppid: int = 1, hostname: str = "mi-node",
                 command: str = "./app", start: int = 10_000_000, end: int = 90_000_000,
                 gpus: int = 1):
        self.path, self.pid, self.ppid, self.command = Path(path), pid, ppid, command
        self.hostname, self.start, self.end = hostname, start, end
        self.guid = str(uuidlib.UUID(int=zlib.crc32(str(path).encode()) << 96 | 0x7000 << 64 | pid))
        self.uuid = "_" + self.guid.replace("-", "_")
        self.machine_id = f"{zlib.crc32(hostname.encode()):032x}"
        self.nid = zlib.crc32(self.machine_id.encode()) % (2**32 - 1)
        self.agents = [Agent(0, "CPU", 0, 0, "AMD EPYC 7763 64-Core Processor", "AMD EPYC 7763")]
        self.agents += [Agent(1 + i, "GPU", 1 + i, i, "gfx90a", "AMD Instinct MI210", 104)
                        for i in range(gpus)]
        self._corr = 0
        self.apis: list[_Api] = []
        self.kernels, self.copies, self.allocs, self.pmc = [], [], [], []
        self.counters: dict[str, int] = {}
        self.symbols: dict[str, int] = {}

    def next_corr(self) -> int:
        self._corr += 1
        return self._corr

    # -- records ----------------------------------------------------------------------------
    def api(self, category: str, name: str, start: int, end: int, tid: int | None = None,
            ancestor: int = 0, message: str | None = None, args=()) -> int:
        """An API call; returns its internal correlation id (what its GPU work carries)."""
        corr = self.next_corr()
        self.apis.append(_Api(category, name, tid or self.pid, start, end, corr, ancestor,
                              message, list(args)))
        return corr

    def roctx_range(self, message: str, start: int, end: int, tid: int | None = None) -> int:
        return self.api(MARKER, "roctxThreadRangeA", start, end, tid, message=message)

    def roctx_mark(self, message: str, ts: int, tid: int | None = None) -> int:
        return self.api(MARKER, "roctxMarkA", ts, ts, tid, message=message)

    def kernel(self, corr: int, name: str, start: int, end: int, gpu: int = 0,
               queue: int = 0x7F00_1000, stream: int = 0, tid: int | None = None,
               grid=(65536, 1, 1), workgroup=(256, 1, 1)) -> int:
        sym = self.symbols.setdefault(name, len(self.symbols) + 1)
        dispatch = len(self.kernels) + 1
        self.kernels.append((dispatch, corr, sym, tid or self.pid, 1 + gpu, queue, stream, start,
                             end, grid, workgroup))
        return dispatch

    def copy(self, corr: int, op: str, start: int, end: int, size: int, src: int, dst: int,
             stream: int = 0, tid: int | None = None) -> None:
        """``src``/``dst``: agent node ids (0 = the CPU)."""
        self.copies.append((corr, op, tid or self.pid, start, end, src, dst, size, stream))

    def allocation(self, corr: int, op: str, start: int, end: int, size: int, address: int,
                   gpu: int = 0, ancestor: int = 0, queue: int = 0, flags: int | None = None,
                   category: str = "MEMORY_ALLOCATION") -> None:
        """``op``: rocprofiler's operation name (MEMORY_ALLOCATION_ALLOCATE, ..._FREE,
        SCRATCH_MEMORY_ALLOC ...)."""
        self.allocs.append((corr, op, self.pid, start, end, 1 + gpu, size, address, ancestor,
                            queue, flags, category))

    def counter(self, dispatch: int, name: str, value: float) -> None:
        cid = self.counters.setdefault(name, len(self.counters) + 1)
        self.pmc.append((dispatch, cid, value))

    # -- writing ------------------------------------------------------------------------------
    def close(self) -> str:
        if self.path.exists():
            self.path.unlink()
        con = sqlite3.connect(self.path)
        con.executescript(_schema("rocpd_tables.sql", self.uuid, self.guid))
        for name in ("rocpd_views.sql", "data_views.sql", "marker_views.sql", "summary_views.sql"):
            con.executescript(_schema(name, self.uuid, self.guid))
        self._rows(con)
        con.executescript(_schema("rocpd_indexes.sql", self.uuid, self.guid))
        con.commit()
        con.close()
        return str(self.path)

    def _strings(self) -> dict[str, int]:
        s = {"", "KERNEL_DISPATCH", "MEMORY_COPY", "MEMORY_ALLOCATION", "SCRATCH_MEMORY"}
        for a in self.agents:
            s |= {a.name, "AMD", a.product_name}
        for x in self.apis:
            s |= {x.category, x.name} | ({x.message} if x.message else set())
        s |= set(self.symbols) | {c[1] for c in self.copies} | {a[1] for a in self.allocs}
        s |= set(self.counters)
        return {v: i for i, v in enumerate(sorted(s), 1)}

    def _rows(self, con) -> None:
        u, strings = self.uuid, self._strings()
        ins = lambda table, **kv: con.execute(  # noqa: E731
            f"INSERT INTO `{table}{u}` ({', '.join(kv)}) VALUES ({', '.join('?' * len(kv))})",
            list(kv.values()))
        for text, i in strings.items():
            ins("rocpd_string", id=i, string=text)
        ins("rocpd_info_node", id=self.nid, hash=self.nid * 7 + 1, machine_id=self.machine_id,
            system_name="Linux", hostname=self.hostname, release="6.8.0", version="#1 SMP",
            hardware_name="x86_64", domain_name="(none)")
        ins("rocpd_info_process", id=self.pid, nid=self.nid, ppid=self.ppid, pid=self.pid,
            init=self.start, fini=self.end, start=self.start, end=self.end, command=self.command,
            environment=json.dumps({"HIP_VISIBLE_DEVICES": "0"}),
            extdata=json.dumps({"kernel_trace": True}))
        streams, queues, threads, events = set(), set(), set(), [0]

        def stream(h):
            if h not in streams:
                ins("rocpd_info_stream", id=h, nid=self.nid, pid=self.pid,
                    name="Default Stream" if h == 0 else f"Stream {len(streams) - 1}")
                streams.add(h)
            return h

        def queue(h):
            if h not in queues:
                ins("rocpd_info_queue", id=h, nid=self.nid, pid=self.pid,
                    name="Default Queue" if h == 0 else f"Queue {len(queues) - 1}")
                queues.add(h)
            return h

        def thread(t):
            if t not in threads:
                ins("rocpd_info_thread", id=t, nid=self.nid, ppid=self.ppid, pid=self.pid, tid=t)
                threads.add(t)
            return t

        def event(category, stack, parent, extdata="{}"):
            events[0] += 1
            ins("rocpd_event", id=events[0], category_id=strings[category], stack_id=stack,
                parent_stack_id=parent, correlation_id=0, extdata=extdata)
            return events[0]

        stream(0)
        queue(0)
        for a in self.agents:
            info = {"node_id": a.node_id, "logical_node_id": a.logical_node_id,
                    "logical_node_type_id": a.type_index, "gpu_index": a.type_index
                    if a.type == "GPU" else -1, "type": 2 if a.type == "GPU" else 1,
                    "cpu_cores_count": 64 if a.type == "CPU" else 0, "cu_count": a.cu_count,
                    "simd_count": 4 * a.cu_count, "wave_front_size": 64 if a.cu_count else 0,
                    "workgroup_max_dim": {"x": 1024, "y": 1024, "z": 1024}, "name": a.name,
                    "vendor_name": "AMD", "product_name": a.product_name, "model_name": ""}
            ins("rocpd_info_agent", id=a.node_id, nid=self.nid, pid=self.pid, type=a.type,
                absolute_index=a.node_id, logical_index=a.logical_node_id,
                type_index=a.type_index, uuid=f"{a.node_id}", name=a.name, model_name="",
                vendor_name="AMD", product_name=a.product_name, user_name=a.product_name,
                extdata=json.dumps(info))
        gpu = self.agents[1].node_id if len(self.agents) > 1 else 0
        for name, cid in self.counters.items():
            ins("rocpd_info_pmc", id=cid, nid=self.nid, pid=self.pid, target_arch="GPU",
                agent_id=gpu, name=name, symbol=name, description=f"{name} counter",
                component="rocm", value_type="ABS", block=name.split("_")[0], expression="",
                is_constant=0, is_derived=0, extdata="{}")
        ins("rocpd_info_code_object", id=1, nid=self.nid, pid=self.pid, agent_id=gpu,
            uri="file:///app#offset=8192&size=65536", load_base=0x7F0000000000, load_size=65536,
            load_delta=0, storage_type="FILE", extdata=json.dumps({"size": 65536}))
        for name, kid in self.symbols.items():
            ins("rocpd_info_kernel_symbol", id=kid, nid=self.nid, pid=self.pid, code_object_id=1,
                kernel_name=f"_Z{len(name)}{name}v.kd", display_name=name,
                kernel_object=0x1000 * kid, kernarg_segment_size=16, kernarg_segment_alignment=8,
                group_segment_size=0, private_segment_size=0, sgpr_count=24, arch_vgpr_count=32,
                accum_vgpr_count=0, extdata=json.dumps({"kernel_id": kid,
                                                        "formatted_kernel_name": name}))
        tracks: dict[tuple, int] = {}
        order = sorted(self.apis, key=lambda x: (0 if x.category.startswith("HIP") else
                                                 1 if x.category.startswith("HSA") else 2))
        for x in order:
            ext = json.dumps({"message": x.message}) if x.message else "{}"
            eid = event(x.category, x.corr, x.ancestor, ext)
            for pos, (typ, name, value) in enumerate(x.args):
                ins("rocpd_arg", event_id=eid, position=pos, type=typ, name=name, value=value)
            thread(x.tid)
            if x.start != x.end:
                ins("rocpd_region", id=x.corr, nid=self.nid, pid=self.pid, tid=x.tid,
                    start=x.start, end=x.end, name_id=strings[x.name], event_id=eid)
            else:
                key = (x.tid, x.category)
                if key not in tracks:
                    tracks[key] = len(tracks) + 1
                    ins("rocpd_track", id=tracks[key], nid=self.nid, pid=self.pid, tid=x.tid,
                        name_id=strings[x.category], extdata="{}")
                ins("rocpd_sample", id=x.corr, track_id=tracks[key], timestamp=x.start,
                    event_id=eid)
        dispatch_event = {}
        for d, corr, sym, tid, agent, q, s, start, end, grid, wg in self.kernels:
            thread(tid)
            eid = event("KERNEL_DISPATCH", corr, corr)
            dispatch_event[d] = eid
            ins("rocpd_kernel_dispatch", id=d, nid=self.nid, pid=self.pid, tid=tid,
                agent_id=agent, kernel_id=sym, dispatch_id=d, queue_id=queue(q),
                stream_id=stream(s), start=start, end=end, private_segment_size=0,
                group_segment_size=0, workgroup_size_x=wg[0], workgroup_size_y=wg[1],
                workgroup_size_z=wg[2], grid_size_x=grid[0], grid_size_y=grid[1],
                grid_size_z=grid[2], region_name_id=strings[""], event_id=eid)
        for i, (d, cid, value) in enumerate(self.pmc, 1):
            ins("rocpd_pmc_event", id=i, event_id=dispatch_event[d], pmc_id=cid, value=value)
        for i, (corr, op, tid, start, end, src, dst, size, s) in enumerate(self.copies, 1):
            thread(tid)
            eid = event("MEMORY_COPY", corr, corr)
            ins("rocpd_memory_copy", id=i, nid=self.nid, pid=self.pid, tid=tid, start=start,
                end=end, name_id=strings[op], dst_agent_id=dst, src_agent_id=src,
                dst_address=0x7F00_0000_0000 + i, src_address=0x5500_0000_0000 + i, size=size,
                stream_id=stream(s), event_id=eid)
        for corr, op, tid, start, end, agent, size, addr, anc, q, flags, cat in self.allocs:
            thread(tid)
            typ = op.rsplit("_", 1)[1]
            typ, level = ("ALLOC" if typ == "ALLOCATE" else typ), (
                "SCRATCH" if op.startswith("SCRATCH") else "REAL")
            eid = event(cat, corr, anc)
            ins("rocpd_memory_allocate", nid=self.nid, pid=self.pid, tid=tid, start=start,
                end=end, agent_id=agent if typ == "ALLOC" else None, type=typ, level=level,
                queue_id=queue(q), stream_id=stream(0), event_id=eid, address=addr, size=size,
                extdata="{}" if flags is None else json.dumps({"flags": str(flags)}))


def typical(path, pid: int = 4242) -> tuple[str, dict]:
    """A small HIP program as rocprofv3 --sys-trace --pmc records it: ROCTx ranges and marks,
    hipMalloc/hipMemcpy H2D, 10 hipLaunchKernel (each with HSA calls inside), a D2H copy,
    hipDeviceSynchronize, hipFree, two counters per dispatch. Returns (path, what was written)."""
    w = RocmWriter(path, pid=pid)
    t, expect = 20_000_000, {"launches": {}, "copies": {}, "marks": 0, "ranges": 0}
    w.roctx_range("main", t, t + 8_000_000)
    expect["ranges"] += 1
    c = w.api("HIP_RUNTIME_API_EXT", "hipMalloc", t + 1000, t + 6000,
              args=[("void**", "ptr", "0x7ffd0000"), ("size_t", "size", "4194304")])
    w.allocation(c, "MEMORY_ALLOCATION_ALLOCATE", t + 2000, t + 5000, 4 << 20, 0x7F0012340000,
                 ancestor=c)
    c = w.api("HIP_RUNTIME_API_EXT", "hipMemcpy", t + 10_000, t + 60_000)
    w.copy(c, "MEMORY_COPY_HOST_TO_DEVICE", t + 20_000, t + 50_000, 4 << 20, src=0, dst=1)
    expect["copies"][c] = "MEMORY_COPY_HOST_TO_DEVICE"
    s = t + 100_000
    for i in range(10):
        w.roctx_mark(f"iter {i}", s - 500)
        expect["marks"] += 1
        c = w.api("HIP_RUNTIME_API_EXT", "hipLaunchKernel", s, s + 8_000,
                  args=[("const void*", "function_address", "0x401000"),
                        ("hipStream_t", "stream", "0")])
        w.api("HSA_CORE_API", "hsa_signal_store_screlease", s + 5_000, s + 6_000, ancestor=c)
        name = "vector_add" if i % 2 == 0 else "reduce_sum"
        d = w.kernel(c, name, s + 20_000, s + 20_000 + (200_000 if i % 2 == 0 else 500_000),
                     stream=0)
        w.counter(d, "SQ_WAVES", 1024.0 + i)
        w.counter(d, "GRBM_GUI_ACTIVE", 5000.5 * (i + 1))
        expect["launches"][c] = name
        s += 600_000
    c = w.api("HIP_RUNTIME_API_EXT", "hipMemcpy", s, s + 80_000)
    w.copy(c, "MEMORY_COPY_DEVICE_TO_HOST", s + 10_000, s + 70_000, 1 << 20, src=1, dst=0)
    expect["copies"][c] = "MEMORY_COPY_DEVICE_TO_HOST"
    w.api("HIP_RUNTIME_API_EXT", "hipDeviceSynchronize", s + 90_000, s + 95_000)
    c = w.api("HIP_RUNTIME_API_EXT", "hipFree", s + 100_000, s + 110_000)
    w.allocation(c, "MEMORY_ALLOCATION_FREE", s + 101_000, s + 102_000, 0, 0x7F0012340000,
                 ancestor=c)
    w.roctx_range("teardown", s + 99_000, s + 120_000)
    expect["ranges"] += 1
    return w.close(), expect


def with_scratch(path) -> str:
    """rocprofv3 --hip-trace --kernel-trace --scratch-memory-trace --marker-trace of two launches
    (API arguments kept) in a ROCTx range, whose kernels need scratch: allocated before the first, freed and reclaimed after the
    second; a hipMalloc besides."""
    w = RocmWriter(path, pid=4343)
    t = 20_000_000
    w.roctx_range("run", t, t + 800_000)
    w.roctx_mark("scratch freed", t + 700_000)
    c = w.api("HIP_RUNTIME_API_EXT", "hipMalloc", t + 1000, t + 6000,
              args=[("void**", "ptr", "0x7ffd0000"), ("size_t", "size", "4194304")])
    w.allocation(c, "MEMORY_ALLOCATION_ALLOCATE", t + 2000, t + 5000, 4 << 20, 0x7F0012340000,
                 ancestor=c)
    for i in range(2):
        s = t + 100_000 + i * 300_000
        c = w.api("HIP_RUNTIME_API_EXT", "hipLaunchKernel", s, s + 8000,
                  args=[("const void*", "function_address", "0x401000"),
                        ("hipStream_t", "stream", "0")])
        if i == 0:
            w.allocation(c, "SCRATCH_MEMORY_ALLOC", s + 9000, s + 15_000, 1 << 20, 0x7F0000100000,
                         queue=0x7F00_1000, flags=1, category="SCRATCH_MEMORY", ancestor=c)
        w.kernel(c, "uses_scratch", s + 20_000, s + 220_000, queue=0x7F00_1000)
    end = t + 700_000
    w.allocation(c, "SCRATCH_MEMORY_FREE", end, end + 1000, 0, 0x7F0000100000, queue=0x7F00_1000,
                 flags=0, category="SCRATCH_MEMORY", ancestor=c)
    w.allocation(c, "SCRATCH_MEMORY_ASYNC_RECLAIM", end + 5000, end + 7000, 0, 0, queue=0x7F00_1000,
                 flags=0, category="SCRATCH_MEMORY", ancestor=c)
    out = w.close()
    # A scratch record names its agent for every operation (rocprofiler's scratch-memory record
    # carries one); the helper writes an agent on allocations only.
    con = sqlite3.connect(out)
    con.execute(f"UPDATE rocpd_memory_allocate{w.uuid} SET agent_id = 1 WHERE level = 'SCRATCH'")
    con.commit()
    con.close()
    return out
