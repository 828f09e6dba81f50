"""Build rocpd databases for tests, notebooks and benchmarks with the real writer.

DatabaseBuilder hands every row to rocprof's C++ writer (``rocprof._core._fixture_writer``: the
RocpdSink, its mapping and its writer, as a session uses them) with values the caller chooses:
no session, no clock. So a fixture is exactly what ``rocprof`` writes, conventions included:
process id = pid, thread id = tid, agent ids CPU = ``CPU_AGENT`` (1) and GPU n =
``gpu_agent(n)`` (2 + n), stream/queue 0 = "Default Stream"/"Default Queue", kernel symbols
without a code object (code_object_id 0), tracks named by their sample category, call stacks
as ``*_SAMPLE_STACK`` node events.

A database as ROCm's own writer (rocprofv3) produces it is a different thing; nothing here
builds one.
"""

from __future__ import annotations

import functools
import json
import os
import time
import uuid as _uuid


def _core():
    from rocprof import _core

    return _core


def new_guid() -> str:
    """A time-ordered (version-7 style) UUID string."""
    ms = time.time_ns() // 1_000_000
    rand = _uuid.uuid4().int & ((1 << 74) - 1)
    v = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(_uuid.UUID(int=v))


CPU_AGENT = 1  # rocprof/info.hpp kCpuAgentId (checked against _core when a builder opens)


def gpu_agent(ordinal: int = 0) -> int:
    """rocpd_info_agent.id of GPU ``ordinal`` (rocprof/info.hpp gpu_agent_id)."""
    return 2 + ordinal


class DatabaseBuilder:
    def __init__(self, path, guid: str | None = None, pid: int = 1000, hostname: str = "host0",
                 gpus: int = 1, rank: int | None = None, command: str = "python train.py",
                 kernel_rename: bool = False, environment: dict | None = None,
                 guid_per_row: bool = False):
        core = _core()
        assert core._CPU_AGENT_ID == CPU_AGENT and core._gpu_agent_id(0) == gpu_agent(0)
        self.path = os.fspath(path)
        self.pid = pid
        env = {"RANK": str(rank)} if rank is not None else {}
        env.update(environment or {})
        self._w = core._fixture_writer(self.path, guid or new_guid(), pid=pid, ppid=1,
                                       hostname=hostname, command=command,
                                       environment=json.dumps(env), cpu_model="Test CPU",
                                       kernel_rename=kernel_rename, guid_per_row=guid_per_row)
        self.guid = self._w.guid
        self._symbols: dict[str, int] = {}
        self._threads: set[int] = set()
        self._streams: set[int] = set()
        self._queues: set[int] = {0}
        self._stacks: dict[tuple, int] = {}
        self._counters: dict[tuple[int, str], int] = {}
        self._sites: dict[tuple, int] = {}
        self._corr = 0
        self._roctx_corr = 0
        self._ranges: dict[int, tuple[int, int, int]] = {}  # ROCTx corr -> (tid, start, end)
        self._range_by_message: dict[str, int] = {}
        self.thread(pid, "MainThread")
        for i in range(gpus):
            self._w.agent(gpu_agent(i), type="GPU", absolute_index=i, logical_index=i, type_index=i,
                          name=f"gpu{i}", product_name="Test GPU", vendor_name="Test")
        self._w.stream(0, "Default Queue", queue=True)
        self.stream(0, "Default Stream")

    # -- helpers ---------------------------------------------------------------------------------
    def string(self, s: str) -> int:
        return self._w.string(s)

    def thread(self, tid: int, name: str = "") -> int:
        if tid not in self._threads:
            self._w.thread(tid, name)
            self._threads.add(tid)
        return tid

    def stream(self, sid: int, name: str | None = None) -> int:
        if sid not in self._streams:
            self._w.stream(sid, name or f"Stream {sid}")
            self._streams.add(sid)
        return sid

    def symbol(self, name: str, display_name: str | None = None) -> int:
        """The kernel symbol of ``name`` (its mangled name), written once; ``display_name``:
        the demangled one the views show (default: the same)."""
        if name not in self._symbols:
            kid = len(self._symbols) + 1
            self._w.kernel_symbol(kid, name, display_name=display_name or name, sgpr_count=16,
                                  arch_vgpr_count=32)
            self._symbols[name] = kid
        return self._symbols[name]

    def next_correlation(self) -> int:
        self._corr += 1
        return self._corr

    def metadata(self, tag: str, value) -> None:
        self._w.metadata(tag, str(value))

    def callsite(self, *frames) -> int:
        """The id of a Python call site, as the launch-site capture stores one: ``frames`` are
        ("file", line, "function") tuples, innermost user frame first; 0 for none. A fourth
        item of the first frame names the forward op of backward work ("backward_of"). One
        str instead: the JSON list of frames as the capture writes it (its first item the site)."""
        if not frames:
            return 0
        key = frames[0] if isinstance(frames[0], str) else tuple(tuple(f) for f in frames)
        if key not in self._sites:
            if isinstance(key, str):
                items = json.loads(key)
            else:
                items = [{"file": f, "line": int(n), "function": fn, **({"backward_of": op[0]} if op else {})}
                         for f, n, fn, *op in key]
            dump = functools.partial(json.dumps, separators=(",", ":"))
            self._sites[key] = self._w.callsite(dump(items[0]), dump(items[1:]) if len(items) > 1 else "")
        return self._sites[key]

    # -- records ---------------------------------------------------------------------------------
    def region(self, category: str, name: str, start: int, end: int, tid: int | None = None,
               message: str | None = None, correlation_id: int | None = None,
               range_corr: int = 0, site: tuple | str | None = None) -> int:
        """A region (an instant, start == end, is stored as a sample, as ROCm does). ``message``:
        for a ROCTx record (category MARKER*) the message, ``name`` being the API function; the
        writer puts it into the event's extdata as ``{"message": ...}``. For other categories
        it is written into extdata as given. ``range_corr``: the enclosing ROCTx range.
        ``site``: the Python call site of an API call, ("file", line, "function") or the JSON
        list of its frames (``callsite``)."""
        tid = self.thread(tid if tid is not None else self.pid)
        kw = {}
        if message is not None and category.startswith("MARKER"):
            kw["message"] = message  # the writer's own path for ROCTx records
        elif message is not None:
            kw["extdata"] = json.dumps({"message": message}, separators=(",", ":"))
        self._w.region(category, name, start, end, tid=tid, correlation_id=correlation_id or 0,
                       instant=start == end, range_corr=range_corr,
                       callsite=self.callsite(site) if site else 0, **kw)
        return correlation_id or 0

    def marker(self, message: str, start: int, end: int, tid: int | None = None,
               function: str = "roctxRangePushA") -> int:
        """A ROCTx range (or, start == end, a mark) as the markers backend records it: named by
        the API function, the message in extdata, its own correlation id (>= 2^32, the region's
        id) and the enclosing range of the same thread, the one opened last that covers it.
        Returns the correlation id; kernels launched inside pass it (or the message) on."""
        tid_ = self.thread(tid if tid is not None else self.pid)
        self._roctx_corr += 1
        corr = (1 << 32) | self._roctx_corr
        parent = 0
        for m_corr, (m_tid, m_start, m_end) in reversed(self._ranges.items()):
            if m_tid == tid_ and m_start <= start and end <= m_end:
                parent = m_corr
                break
        if start == end and function == "roctxRangePushA":
            function = "roctxMarkA"
        self.region("MARKER_CORE_API", function, start, end, tid=tid_, message=message,
                    correlation_id=corr, range_corr=parent)
        if start != end:
            self._ranges[corr] = (tid_, start, end)
            self._range_by_message[message] = corr
        return corr

    def kernel(self, name: str, start: int, end: int, agent: int | None = None, stream: int = 0,
               tid: int | None = None, correlation_id: int | None = None, region: str | None = None,
               grid=(1024, 1, 1), block=(256, 1, 1), range_corr: int | None = None,
               site: tuple | str | None = None, queue: int = 0) -> int:
        """A dispatch; ``region``: the message of the ROCTx range it was launched in (the last
        ``marker`` with that message; ``range_corr`` names the range by correlation id);
        ``site``: its Python launch site, ("file", line, "function") or the JSON list of its
        frames (``callsite``); ``queue``: the queue
        (rocpd_info_queue id; 0 is "Default Queue", others are named "Queue N")."""
        tid = self.thread(tid if tid is not None else self.pid)
        corr = correlation_id if correlation_id is not None else self.next_correlation()
        if range_corr is None:
            range_corr = self._range_by_message.get(region, 0) if region is not None else 0
        self._w.kernel(self.symbol(name), start, end, tid=tid,
                       agent=gpu_agent(0) if agent is None else agent, stream=self.stream(stream),
                       correlation_id=corr, dispatch_id=corr, grid=list(grid), block=list(block),
                       region_name=region, range_corr=range_corr,
                       callsite=self.callsite(site) if site else 0, queue=self.queue(queue))
        return corr

    def collective(self, function: str, start: int, end: int, *, count: int, datatype: str,
                   comm: int, rank: int, nranks: int, type_size: int = 4, root: int = -1,
                   peer: int = -1, stream: int = 0, seq: int | None = None,
                   algo: str | None = None, proto: str | None = None, nchannels: int = 0,
                   tid: int | None = None) -> None:
        """A collective call (``function``: "ncclAllReduce", ...) as the NCCL profiler plugin
        records it; bytes = count x ``type_size``."""
        self._w.collective(function, start, end, tid=self.thread(tid if tid is not None else self.pid),
                           count=count, bytes=count * type_size, datatype=datatype, comm=comm,
                           rank=rank, nranks=nranks, root=root, peer=peer, stream=stream,
                           seq=(1 << 64) - 1 if seq is None else seq, algo=algo, proto=proto,
                           nchannels=nchannels)

    def queue(self, qid: int) -> int:
        if qid not in self._queues:
            self._w.stream(qid, f"Queue {qid}", queue=True)
            self._queues.add(qid)
        return qid

    def memory_copy(self, name: str, start: int, end: int, size: int, src_agent: int = CPU_AGENT,
                    dst_agent: int | None = None, stream: int = 0, tid: int | None = None,
                    correlation_id: int | None = None, site: tuple | str | None = None,
                    src_memory: str = "", dst_memory: str = "", memset: bool = False) -> int:
        """A copy (or, ``memset``, a set: name MEMORY_SET by convention). ``src_memory`` /
        ``dst_memory``: PAGEABLE, PINNED, DEVICE ... as the CUPTI mapping records them ("" =
        not recorded)."""
        tid = self.thread(tid if tid is not None else self.pid)
        corr = correlation_id if correlation_id is not None else self.next_correlation()
        dst = gpu_agent(0) if dst_agent is None else dst_agent
        self._w.memory_copy(name, start, end, size, tid=tid, src_agent=dst if memset else src_agent,
                            dst_agent=dst, src_address=8192, dst_address=4096,
                            stream=self.stream(stream), correlation_id=corr, memset=memset,
                            callsite=self.callsite(site) if site else 0,
                            src_memory=src_memory, dst_memory=dst_memory)
        return corr

    def allocation(self, type_: str, start: int, end: int, size: int, agent: int | None = None,
                   level: str = "REAL", address: int = 65536) -> int:
        corr = self.next_correlation()
        self._w.allocation(type_, start, end, size, tid=self.pid,
                           agent=gpu_agent(0) if agent is None else agent, level=level,
                           address=address, correlation_id=corr)
        return corr

    def sample(self, track: str | None, timestamp: int, category: str = "PYTHON_SAMPLE",
               call_stack=None, tid: int | None = None) -> int:
        """A call-stack sample. ``call_stack``: function names (or (function, file, line)
        tuples) outermost first (or ``{"frames": [...]}``), stored as the sampler stores stacks
        (one ``<category>_STACK``
        node event per frame). The sample's track is its thread's track of ``category``, as the
        sampler's: ``track`` is not a name the writer can give (kept for callers)."""
        del track
        tid = self.thread(tid if tid is not None else self.pid)
        frames = call_stack.get("frames", []) if isinstance(call_stack, dict) else call_stack or []
        return self._w.sample(timestamp, tid=tid, category=category,
                              stack_id=self._stack(category + "_STACK", frames)) or 0

    def _stack(self, category: str, frames) -> int:
        parent = 0
        for depth, fn in enumerate(frames):
            key = (category, parent, tuple(fn) if isinstance(fn, list) else fn)
            node = self._stacks.get(key)
            if node is None:
                node = self._stacks[key] = len(self._stacks) + 1
                if isinstance(fn, (tuple, list)):
                    fn, file, lineno = fn
                    line = {"file": str(file), "line": int(lineno)}
                else:
                    line = {"file": "test.py", "line": depth + 1}
                self._w.stack(node, parent, category=category,
                              call_stack=json.dumps({"function": str(fn), **line, "kind": "python"}),
                              line_info=json.dumps(line))
            parent = node
        return parent

    def gpu(self, ordinal: int = 0, *, name: str, model_name: str = "", uuid: str = "",
            vendor_name: str = "NVIDIA", extdata: dict | None = None) -> int:
        """Describe GPU ``ordinal`` as a capture backend would (the row is replaced)."""
        agent = gpu_agent(ordinal)
        self._w.agent(agent, type="GPU", absolute_index=ordinal, logical_index=ordinal,
                      type_index=ordinal, uuid=uuid, name=name, model_name=model_name,
                      vendor_name=vendor_name, product_name=name,
                      extdata=json.dumps(extdata or {}, separators=(",", ":")))
        return agent

    def counter(self, name: str, *, agent: int | None = None, description: str = "",
                units: str = "", block: str = "", is_constant: bool | None = None,
                extdata: dict | None = None) -> int:
        """A hardware counter of a GPU (its rocpd_info_pmc row, written once); returns its id.
        ``is_constant`` defaults to what the capture decides: names ending in
        ``.peak_sustained`` (the hardware's per-cycle peak) are constant."""
        agent = gpu_agent(0) if agent is None else agent
        key = (agent, name)
        if key not in self._counters:
            pmc_id = len(self._counters) + 1
            constant = name.endswith(".peak_sustained") if is_constant is None else is_constant
            derived = ".pct_of_" in name or ".per_" in name
            self._w.pmc_info(pmc_id, name, agent=agent, description=description, units=units,
                             block=block or name.split("__")[0], is_constant=constant,
                             is_derived=derived, extdata=json.dumps(extdata or {}))
            self._counters[key] = pmc_id
        return self._counters[key]

    def counter_value(self, correlation_id: int, name: str, value: float,
                      agent: int | None = None) -> None:
        """A value of counter ``name`` for the dispatch with ``correlation_id`` (before or after
        the dispatch itself: the writer pairs them as it does a session's)."""
        agent = gpu_agent(0) if agent is None else agent
        self._w.pmc_value(correlation_id, self.counter(name, agent=agent), float(value),
                          agent=agent)

    def pc_sample(self, kernel: str, pc_offset: int, samples: int, *, start: int, end: int,
                  agent: int | None = None, stall_reason: str | None = None,
                  source_file: str | None = None, line: int = 0, instruction: str | None = None,
                  not_issued: bool = False, code_object: int = 0, correlation_id: int = 0) -> None:
        """``samples`` PC samples of one instruction of ``kernel`` (its mangled name, as the
        kernel symbol's kernel_name) with one stall reason, in the window [start, end]."""
        self._w.pc_sample(kernel, pc_offset, samples, start=start, end=end,
                          agent=gpu_agent(0) if agent is None else agent,
                          stall_reason=stall_reason, source_file=source_file, line=line,
                          instruction=instruction, not_issued=not_issued, code_object=code_object,
                          correlation_id=correlation_id)

    def kernels_bulk(self, rows) -> None:
        """Fast path for benchmarks: rows of (name, start, end) on GPU 0, stream 0."""
        self._w.kernels([(self.symbol(name), start, end) for name, start, end in rows],
                        tid=self.thread(self.pid), agent=gpu_agent(0), grid=[1024, 1, 1],
                        block=[256, 1, 1])

    def close(self, end: int = 0) -> str:
        """Closes the database; ``end`` != 0 is the session's end (process and open threads)."""
        return self._w.close(end)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
