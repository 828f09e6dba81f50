"""What the analyses read, loaded once per process (one guid-suffixed part = one process): its GPU
work (kernels, copies, sets) classified as compute, communication or memory and joined to the API
call that launched it, its API calls (launches, synchronisations), and its ROCTx ranges with their
nesting depth. Each file is read on its own read-only connection.

The link: an API call and the GPU work it enqueued share ``rocpd_event.stack_id`` (the internal
correlation id; ROCm's writer keeps the external one, usually 0, in ``correlation_id``), read
here as the column ``corr``.

Classification, as users of Nsight Systems / HTA expect it:
- communication: kernels of a collective library (NCCL, RCCL, MSCCL: ``COMM_PATTERN``);
- memory: copies and sets (rocpd_memory_copy), on the GPU that copies (a copy to the host is
  charged to its source GPU);
- compute: every other kernel.
A call *blocks the host* when it is a synchronisation (``*Synchronize``, CUPTI's synchronisation
records other than stream-wait-event) or an API call whose copy goes to the host (a D2H copy: the
caller waits for it, as ``tensor.item()`` does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import _schema
from ..io.filters import Filter, name_mask, rank_of, resolve
from .chunks import GpuStream, stored_kernels
from .gpuload import column_pieces, gpu_frame
from .gpuprep import _prepare_gpu, join_launches, pd_unique  # noqa: F401  (read from here too)
from .sites import sites_of

COMM_PATTERN = r"(?i)nccl|rccl|msccl"
SYNC_PATTERN = r"(?i)synchroni[sz]e"
# API domains whose calls launch GPU work; when a correlation id appears in several (a runtime
# call and the driver call it makes), the first listed wins.
_API_PRIORITY = ("CUDA_RUNTIME_API", "HIP_RUNTIME_API_EXT", "HIP_RUNTIME_API", "CUDA_DRIVER_API")
_NOT_API = ("PYTHON_SAMPLE", "CPU_SAMPLE")


@dataclass
class Process:
    """One profiled process. Times are CLOCK_BOOTTIME ns as stored."""

    guid: str
    pid: int
    rank: int | None
    host: str
    command: str
    gpu: object = field(repr=False)     # DataFrame, one row per kernel/copy/set
    api: object = field(repr=False)     # DataFrame, one row per API call (not ROCTx)
    ranges: object = field(repr=False)  # DataFrame, one row per ROCTx range
    threads: dict = field(default_factory=dict, repr=False)  # tid -> name
    agents: dict = field(default_factory=dict, repr=False)   # agent id -> (index, name)
    streams: dict = field(default_factory=dict, repr=False)  # stream id -> name
    start: int | None = None  # the process's start (rocpd_info_process.start), None unknown
    samples: object = field(default=None, repr=False)  # sampled.attach_samples: tid, timestamp, site, function, line
    # A process too big to hold: its kernels are read in chunks (rocpd.analysis.chunks.GpuStream)
    # and ``gpu`` holds its copies only; ``facts`` are the sweep's counts (streamed.py).
    stream: object = field(default=None, repr=False)
    facts: dict | None = field(default=None, repr=False)
    gpu_head: object = field(default=None, repr=False)  # streamed: each stream's first ops

    def gpu_streams(self):
        """((agent, stream), ops, how many) per stream in order: the ops all, or a streamed
        process's first ones (``gpu_head``, with ``facts["tracks"]``' counts)."""
        g = self.gpu if self.stream is None else self.gpu_head
        if g is None or not len(g):
            return
        for key, ops in g.groupby(["agent", "stream"], sort=True):
            yield key, ops, (len(ops) if self.stream is None else
                             self.facts["tracks"][(int(key[0]), int(key[1]))])

    @property
    def label(self) -> str:
        return f"rank {self.rank}" if self.rank is not None else f"pid {self.pid}"

    @property
    def has_api(self) -> bool:
        return bool(len(self.api))

    @property
    def gpu_ops(self) -> int:
        """GPU ops (kernels, copies, sets) analysed, streamed or held."""
        return self.facts["ops"] if self.facts is not None else len(self.gpu)

    def gpu_span(self) -> tuple[int, int] | None:
        """First start and last end of the GPU ops, or None without any."""
        if self.facts is not None:
            return (self.facts["first"], self.facts["last"]) if self.facts["ops"] else None
        g = self.gpu
        return (int(g["start"].min()), int(g["end"].max())) if len(g) else None

    def launched_kernels(self) -> int:
        """Kernels whose launch call was recorded."""
        if self.facts is not None:
            return self.facts["launched_kernels"]
        return int((self.gpu["launch_start"].notna() & (self.gpu["kind"] != "memory")).sum())


# Kernels and copies as one union read row by row: what gpuload.gpu_frame reads as columns
# (tests/unit/rocpd/analysis/test_bounded_load.py holds the two side by side).
_GPU_SQL = """
SELECT * FROM (
  SELECT K.guid, K.pid, K.tid, K.agent_id AS agent, K.stream_id AS stream, K.start, K."end",
         COALESCE(S.display_name, S.kernel_name, '(unknown)') AS name, 'kernel' AS op,
         E.stack_id AS corr, {line_info} AS line_info, NULL AS bytes, NULL AS extdata,
         NULL AS src_agent, NULL AS dst_agent
  FROM rocpd_kernel_dispatch K
  LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
  LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
  UNION ALL
  SELECT M.guid, M.pid, M.tid,
         CASE WHEN DA.type = 'CPU' AND M.src_agent_id IS NOT NULL THEN M.src_agent_id
              ELSE M.dst_agent_id END,
         M.stream_id, M.start, M."end",
         COALESCE(N.string, 'MEMORY_COPY'), 'copy', E.stack_id, {line_info}, M.size,
         M.extdata, M.src_agent_id, M.dst_agent_id
  FROM rocpd_memory_copy M
  LEFT JOIN rocpd_string N ON N.id = M.name_id AND N.guid = M.guid
  LEFT JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid
  LEFT JOIN rocpd_info_agent DA ON DA.id = M.dst_agent_id AND DA.guid = M.guid
) WHERE {where}
"""

_REGION_SQL = """
SELECT * FROM (
  SELECT R.guid, R.pid, R.tid, R.start, R."end", C.string AS category,
         {name} AS name, E.stack_id AS corr, {line_info} AS line_info
  FROM rocpd_region R
  LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid
  LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid
  LEFT JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid
) WHERE {where}
"""


def _frame(conn, sql, params, columns=None):
    """The rows of ``sql`` as a DataFrame, as ``DataFrame.from_records`` would make it, built a
    column at a time from slices: integer columns go straight into arrays, and SQLite's new str
    for every text cell (a guid or category repeated on a million rows) is shared per column
    until the column turns out mostly distinct (names)."""
    cur = conn.execute(sql, params)
    cols = columns or [d[0] for d in cur.description]
    parts, _ = column_pieces(cur, len(cols))
    if not parts or not parts[0]:
        return pd.DataFrame.from_records([], columns=cols)
    data = {}
    for c, chunks in zip(cols, parts, strict=True):
        if all(isinstance(p, np.ndarray) for p in chunks):
            data[c] = np.concatenate(chunks)
        else:  # None, floats or texts somewhere: the column as from_records infers it
            data[c] = pd.Series([v for p in chunks for v in (p.tolist() if isinstance(p, np.ndarray)
                                                              else p)], dtype=None)
        chunks.clear()
    return pd.DataFrame(data, columns=cols)



def load(db, comm_pattern: str = COMM_PATTERN, stream_above: int | None = None,
         **filters) -> list[Process]:
    """Every process of ``db`` (after the shared filters: time window, pid, rank, kernel regex).
    A part with more than ``stream_above`` kernel rows is not held: its kernels are read again in
    chunks when swept (``p.stream``; rocpd.analysis.streamed)."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    ranks = rank_of(db)
    comm_re = re.compile(comm_pattern)
    out = []
    for src in db.sources():
        conn = src.conn
        name_sql = _schema.region_name_sql("C.string", "E.extdata", "S.string")
        reg_all = _frame(conn, _REGION_SQL.format(name=name_sql, where=where, line_info=_schema.line_info_sql("E")), params)
        procs = _frame(conn, "SELECT P.guid, P.pid, P.command, N.hostname, P.start FROM rocpd_info_process P"
                             " LEFT JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid", ())
        threads = _frame(conn, "SELECT guid, tid, name FROM rocpd_info_thread", ())
        # A GPU is numbered among GPUs (type_index): in ROCm's databases the absolute index is
        # the node id, and node 0 is the CPU.
        agents = _frame(conn, "SELECT guid, id, type, COALESCE(type_index, absolute_index),"
                              " product_name, name FROM rocpd_info_agent", ())
        streams = _frame(conn, "SELECT guid, id, name FROM rocpd_info_stream", ())
        pids = _as_list(flt.pid)
        for part in src.parts:
            prow = procs[procs["guid"] == part.guid]
            streamed = stream_above is not None and \
                stored_kernels(conn, part.guid, stream_above) > stream_above
            gpu = gpu_frame(conn, where, params, part.guid, _schema.line_info_sql("E"),
                            **({"kernels": False} if streamed else {}))
            if (flt.include or flt.exclude) and len(gpu):
                gpu = gpu[(gpu["op"] != "kernel") | name_mask(gpu["name"], flt)]
            gpu = gpu.reset_index(drop=True)
            regs = reg_all[reg_all["guid"] == part.guid].reset_index(drop=True)
            if prow.empty:  # a writer killed before its process row: the records still count
                known = [int(x) for x in (*gpu["pid"].dropna()[:1], *regs["pid"].dropna()[:1])]
                prow = pd.DataFrame([{"pid": known[0] if known else 0, "command": "",
                                      "hostname": "", "start": None}])
            pid = int(prow["pid"].iloc[0])
            rank = ranks.get(part.guid)
            if pids is not None and pid not in pids:
                continue
            if flt.rank is not None and rank not in (_as_list(flt.rank) or []):
                continue
            is_marker = regs["category"].fillna("").str.startswith("MARKER")
            api = regs[~is_marker & ~regs["category"].isin(_NOT_API)].reset_index(drop=True)
            ranges = regs[is_marker & (regs["end"] > regs["start"])].reset_index(drop=True)
            p = Process(
                guid=part.guid, pid=pid, rank=rank,
                host=str(prow["hostname"].iloc[0] or ""), command=str(prow["command"].iloc[0] or ""),
                start=int(prow["start"].iloc[0]) if _known(prow["start"].iloc[0]) and
                prow["start"].iloc[0] else None,
                gpu=_prepare_gpu(gpu, comm_re), api=_prepare_api(api), ranges=_prepare_ranges(ranges),
                threads={int(t): (n or "") for g, t, n in threads.itertuples(index=False) if g == part.guid},
                agents={int(i): (int(ix) if _known(ix) else int(i), pn or n or f"GPU {ix}")
                        for g, i, ty, ix, pn, n in agents.itertuples(index=False)
                        if g == part.guid and ty == "GPU"},
                streams={int(i): (n or f"Stream {i}") for g, i, n in streams.itertuples(index=False)
                         if g == part.guid},
            )
            _join_launches(p)
            if streamed:
                p.stream = GpuStream(conn, where, params, part.guid, _schema.line_info_sql("E"),
                                     flt, comm_re)
                p.stream.copies, p.stream.index = p.gpu, launch_index(p.api)
            out.append(p)
    # Ranks in numeric order (rank 2 before rank 10, whatever the files' names), then processes
    # without a rank by host and pid: every table and the report list them so.
    out.sort(key=lambda p: (p.rank is None, p.rank if p.rank is not None else 0, p.host, p.pid))
    return out


def _known(v) -> bool:
    return v is not None and v == v  # NaN is not equal to itself


def _as_list(v):
    if v is None:
        return None
    return [int(x) for x in (v if isinstance(v, (list, tuple, set)) else [v])]


def _prepare_api(api):
    api = api.copy()
    for c in ("start", "end", "tid"):
        api[c] = api[c].fillna(0).astype("int64")
    api["corr"] = api["corr"].fillna(0).astype("int64")
    api["name"] = api["name"].fillna("(unknown)").astype(str)
    api["category"] = api["category"].fillna("").astype(str)
    api["site"], api["function"] = sites_of(api["line_info"])
    api = api.drop(columns=["line_info"])
    sync = api["name"].str.contains(SYNC_PATTERN, regex=True)
    api["blocking"] = sync.map({True: "sync", False: ""})
    return api.sort_values("start", kind="stable", ignore_index=True)


def _prepare_ranges(ranges):
    ranges = ranges.copy()
    for c in ("start", "end", "tid"):
        ranges[c] = ranges[c].fillna(0).astype("int64")
    ranges["name"] = ranges["name"].fillna("(unnamed)").astype(str)
    ranges = ranges.sort_values(["tid", "start", "end"], ascending=[True, True, False],
                                kind="stable", ignore_index=True)
    depth = np.zeros(len(ranges), dtype=np.int64)
    stack: list[int] = []
    last_tid = None
    for i, (tid, s, e) in enumerate(zip(ranges["tid"].to_numpy(), ranges["start"].to_numpy(),
                                        ranges["end"].to_numpy(), strict=True)):
        if tid != last_tid:
            stack, last_tid = [], tid
        while stack and stack[-1] <= s:
            stack.pop()
        depth[i] = len(stack)
        stack.append(e)
    ranges["depth"] = depth
    return ranges.drop(columns=["line_info", "corr"], errors="ignore")


def _join_launches(p: Process) -> None:
    """Each GPU op gets the API call that launched it (same correlation id, same process):
    launch_start/launch_end/launch_name/launch_tid (NaN/None where none was recorded), and its
    Python line from the launch call where the op itself has none. API calls whose copy goes to
    the host are marked blocking ("d2h")."""
    join_launches(p.gpu, launch_index(p.api))
    mark_d2h(p.api, p.gpu)


def launch_index(api):
    """The launch call of each correlation id (runtime before driver, then the first), indexed by
    id: what :func:`join_launches` looks ops up in (built once for a process read in chunks)."""
    if api.empty:
        return None
    prio = {c: i for i, c in enumerate(_API_PRIORITY)}
    cand = api[api["corr"] != 0].assign(_p=api["category"].map(lambda c: prio.get(c, len(prio))))
    cand = cand[~cand["category"].str.contains("SYNCHRONIZATION")]
    cand = cand.sort_values(["corr", "_p", "start"]).drop_duplicates("corr")
    return cand.set_index("corr")


def mark_d2h(api, gpu) -> None:
    """API calls whose copy (in ``gpu``) goes to the host block the host: blocking "d2h"."""
    if api.empty or gpu.empty:
        return
    d2h = set(gpu.loc[gpu["direction"] == "D2H", "corr"]) - {0}
    if d2h:
        mark = api["corr"].isin(d2h) & (api["blocking"] == "") & \
            ~api["category"].str.contains("SYNCHRONIZATION")
        api.loc[mark, "blocking"] = "d2h"


def blocking_calls(p: Process):
    """The calls during which the host waited for the GPU, outermost only: a runtime call, the
    driver call inside it and CUPTI's synchronisation record of the same wait count once. Column
    ``after_site``: the Python line of the last GPU work launched before the call on its thread,
    which names the place where no call site was recorded for the call itself."""
    b = p.api[p.api["blocking"] != ""]
    if b.empty:
        return b.assign(after_site=pd_none(b))
    b = b.sort_values(["tid", "start", "end"], ascending=[True, True, False], kind="stable")
    keep = np.ones(len(b), dtype=bool)
    tids, ends = b["tid"].to_numpy(), b["end"].to_numpy()
    reach, last = -1, None
    for i in range(len(b)):
        if tids[i] != last:
            reach, last = -1, tids[i]
        if ends[i] <= reach:
            keep[i] = False
        else:
            reach = max(reach, ends[i])
    b = b[keep].reset_index(drop=True)
    after = np.full(len(b), None, dtype=object)
    g = p.gpu[p.gpu["launch_start"].notna()]
    for tid in b["tid"].unique():
        launched = g[g["launch_tid"] == tid].sort_values("launch_start", kind="stable")
        if launched.empty:
            continue
        rows = np.flatnonzero(b["tid"].to_numpy() == tid)
        j = np.searchsorted(launched["launch_start"].to_numpy(), b["start"].to_numpy()[rows],
                            side="right") - 1
        sites = launched["site"].to_numpy()
        after[rows[j >= 0]] = sites[j[j >= 0]]
    b["after_site"] = after
    return b


def pd_none(frame):
    return [None] * len(frame)
