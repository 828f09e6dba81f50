"""What the timeline exporters (Chrome, Perfetto, OTF2) read the same way: the regions with their
display names, the ROCTx marks, the other samples (call stacks with their frames), the GPU work (kernels and copies) that passes the shared filters,
memory allocations as running totals, scratch-memory operations and hardware-counter values
per dispatch.

Links: an API call and the GPU work it enqueued share ``rocpd_event.stack_id`` (the internal
correlation id, in ROCm's databases and ours alike; ROCm keeps ``correlation_id`` for the
external id, usually 0), so every link is read from ``stack_id``; 0 links nothing.

GPU side: a copy is drawn under the GPU that takes part in it (its destination, or its source
when the destination is the CPU: a device-to-host copy belongs to the GPU), and a GPU is named
by its type and index among agents of its type ("GPU 0"), whatever its node id, unless ROCm's
--agent-index-value (``agent_index``) asks for its logical or absolute node id.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import _schema
from ..io.filters import Filter, name_mask
from ..summary.samples import SAMPLE_CATEGORIES, Stacks
from . import agent_column

# A region's display name: a ROCTx range by its message (see rocpd._schema.region_name_sql).
REGION_NAME = _schema.region_name_sql()


def regions(conn, where: str, params: list) -> Iterator[tuple]:
    """(guid, category, name, pid, tid, stack_id, start, end) of every region in ``where``, read
    as iterated (a trace of millions of regions holds none of these rows)."""
    return conn.execute(f'SELECT guid, category, {REGION_NAME}, pid, tid, stack_id, start, "end"'
                        f" FROM regions WHERE {where}", params)


def regions_by_start(conn, where: str, params: list) -> Iterator[tuple]:
    """:func:`regions` in time order, the longer of two that start together first (the order
    in which they nest), ties in the store's order; sorted by SQLite (which spills to disk),
    read as iterated."""
    return conn.execute(f'SELECT guid, category, {REGION_NAME}, pid, tid, stack_id, start, "end"'
                        f' FROM regions WHERE {where} ORDER BY start, "end" DESC, id', params)


def marks(conn, where: str, params: list) -> Iterator[tuple]:
    """(guid, category, name, pid, tid, timestamp) of every ROCTx mark (an instant on its
    thread, stored as a sample of a MARKER category) in ``where``, named by its message; read
    as iterated."""
    w = where.replace('"end"', "timestamp").replace("start", "timestamp")
    name = _schema.region_name_sql()
    return conn.execute(f"SELECT guid, category, {name}, pid, tid, timestamp FROM samples"
                        f" WHERE category LIKE 'MARKER%' AND {w} ORDER BY timestamp",
                        params)


def samples(conn, where: str, params: list) -> Iterator[tuple]:
    """(guid, category, name, pid, tid, timestamp, frames) of every sample ROCm's samples view
    holds in ``where`` but the ROCTx marks (:func:`marks`): a call-stack sample with its frames
    (rocpd.summary.samples.Frame, outermost first), named by its innermost function; any other
    instant by its name as a region's, with no frames. ROCm's Perfetto writer draws every row.
    Read as iterated: what is held is the stacks, one node per distinct frame and caller."""
    w = where.replace('"end"', "timestamp").replace("start", "timestamp")
    rows = conn.execute(
        f"SELECT guid, category, {_schema.region_name_sql()}, pid, tid, timestamp, stack_id"
        f" FROM samples WHERE (category IS NULL OR category NOT LIKE 'MARKER%') AND {w}"
        " ORDER BY timestamp", params)
    stacks = None
    for guid, cat, name, pid, tid, ts, sid in rows:
        frames = ()
        if cat in SAMPLE_CATEGORIES:
            if stacks is None:  # the stack tree is read only where there are call stacks
                stacks = Stacks(conn)
            frames = stacks.frames(guid, sid)
        yield (guid, cat, frames[-1].function if frames else name or cat or "(sample)",
               pid, tid, ts, frames)


# Trace labels number agents per type ("GPU 0") unless ROCm's --agent-index-value says otherwise.
LABEL_INDEX = "type-relative"


def _agent_label(kind, index) -> str:
    return f"{kind or 'GPU'} {index if index is not None else '?'}"


def agent_labels(conn, agent_index: str = LABEL_INDEX) -> dict:
    """{(guid, absolute index): (label, product name)} of one file's agents, the label's number
    chosen by ``agent_index`` (rocpd.export.AGENT_INDEX)."""
    col = agent_column(agent_index).replace("agent_", "").replace("abs_", "absolute_") \
        .replace("log_", "logical_")
    return {(g, a): (_agent_label(t, i), p) for g, a, t, i, p in conn.execute(
        f"SELECT guid, absolute_index, type, {col}, COALESCE(NULLIF(product_name, ''), name)"
        " FROM rocpd_info_agent")}


# A copy belongs to the GPU taking part: its destination, or its source when that is the CPU.
_GPU_SQL = """
SELECT 'kernel', guid, name, pid, agent_abs_index, agent_type, {k_index}, {k_lane}, stack_id,
       start, "end" FROM kernels WHERE {w}
UNION ALL
SELECT 'copy', guid, name, pid,
       CASE WHEN dst_agent_type = 'CPU' THEN src_agent_abs_index ELSE dst_agent_abs_index END,
       CASE WHEN dst_agent_type = 'CPU' THEN src_agent_type ELSE dst_agent_type END,
       CASE WHEN dst_agent_type = 'CPU' THEN {src_index} ELSE {dst_index} END,
       {c_lane}, stack_id, start, "end" FROM memory_copies WHERE {w}
ORDER BY start
"""


_BLOCK = 1 << 16  # rows of GPU work read (and filtered) at a time


def gpu_activity(conn, where: str, params: list, flt: Filter, agent_index: str = LABEL_INDEX,
                 by_queue: bool = False) -> Iterator[tuple]:
    """(kind, guid, name, pid, agent, agent label, stream_id, stream, stack_id, start, end) of
    every kernel and copy in ``where``, kind 'kernel' or 'copy', ordered by start; ``agent`` is
    the GPU's absolute index (a key), the label its type and number under ``agent_index``
    (ROCm's --agent-index-value, rocpd.export.AGENT_INDEX: "GPU 0" per type by default).
    ``by_queue`` (ROCm's --group-by-queue): the queue (id, name) in place of the stream. The
    kernel-name regexes of ``flt`` never drop copies. Read as iterated, a block of rows at a
    time."""
    k_lane, c_lane = ("queue_id, queue", "queue_id, queue_name") if by_queue else \
        ("stream_id, stream", "stream_id, stream_name")
    sql = _GPU_SQL.format(w=where, k_lane=k_lane, c_lane=c_lane,
                          k_index=agent_column(agent_index),
                          src_index=agent_column(agent_index, "src_"),
                          dst_index=agent_column(agent_index, "dst_"))
    cur = conn.execute(sql, [*params, *params])
    while block := cur.fetchmany(_BLOCK):
        rows = [(k, g, n, p, a, _agent_label(t, ti), *rest) for k, g, n, p, a, t, ti, *rest in block]
        if flt.include or flt.exclude:
            import pandas as pd

            keep = name_mask(pd.Series([r[2] for r in rows]), flt).tolist()
            rows = [r for r, k in zip(rows, keep, strict=True) if k or r[0] == "copy"]
        yield from rows


def allocations(conn, where: str, params: list, agent_index: str = LABEL_INDEX) -> list[tuple]:
    """Bytes allocated per (guid, pid, agent label) over time: [(guid, pid, label, ts, total)],
    each step where an allocation returns (+size) or a free begins (-size). A free is matched
    to its allocation by address (ROCm records neither size nor agent on a free); a free of an
    address never allocated in view changes nothing. Labels as :func:`gpu_activity`'s. PyTorch's
    caching-allocator rows (categories TORCH_ALLOCATOR_*: blocks and segments inside memory the
    runtime rows already count) are left out: :func:`allocator_totals` draws them."""
    rows = conn.execute(
        'SELECT guid, pid, type, start, "end", address, size, agent_type,'
        f" {agent_column(agent_index)} FROM memory_allocations"
        f" WHERE {where} AND level IS NOT 'SCRATCH' AND COALESCE(category, '') NOT LIKE 'TORCH\\_ALLOCATOR\\_%'"
        " ESCAPE '\\' ORDER BY start", params).fetchall()
    live: dict[tuple, tuple] = {}  # (guid, address) -> (label, size)
    steps: list[tuple] = []
    for guid, pid, typ, start, end, address, size, a_type, a_index in rows:
        if typ in ("ALLOC", "REALLOC") and a_type is not None:
            live[(guid, address)] = (_agent_label(a_type, a_index), int(size or 0))
            steps.append((end, guid, pid, live[(guid, address)][0], int(size or 0)))
        elif typ == "FREE" and (guid, address) in live:
            label, size = live.pop((guid, address))
            steps.append((start, guid, pid, label, -size))
    totals: dict[tuple, int] = {}
    out = []
    for ts, guid, pid, label, delta in sorted(steps, key=lambda s: s[0]):
        key = (guid, pid, label)
        totals[key] = totals.get(key, 0) + delta
        out.append((guid, pid, label, ts, totals[key]))
    return out


def allocator_totals(conn, where: str, params: list,
                     agent_index: str = LABEL_INDEX) -> Iterator[tuple]:
    """PyTorch's caching allocator per (guid, pid, agent label) over time: (guid, pid, label, ts,
    allocated, reserved) after each of its actions, ``allocated`` the live blocks' bytes (what
    torch counts as allocated), ``reserved`` the live segments' (rocpd.memory.rows says which
    rows these are). A free is matched to its allocation by address; several actions at one
    time give one point. Read as iterated."""
    cur = conn.execute(
        f"SELECT guid, pid, category, type, start, address, size, agent_type,"
        f" {agent_column(agent_index)} FROM memory_allocations WHERE {where} AND category IN"
        " ('TORCH_ALLOCATOR_BLOCK', 'TORCH_ALLOCATOR_SEGMENT') ORDER BY start, id", params)
    live: dict[tuple, tuple] = {}   # (guid, category, address) -> (label, size)
    totals: dict[tuple, list] = {}  # (guid, pid, label) -> [allocated, reserved]
    pending: dict[tuple, int] = {}  # keys changed at the current time
    now = None
    while rows := cur.fetchmany(5000):
        for guid, pid, cat, typ, ts, address, size, a_type, a_index in rows:
            if ts != now:
                for k, t in pending.items():
                    yield (*k, t, *totals[k])
                pending.clear()
                now = ts
            old = live.pop((guid, cat, address), None)
            j = 0 if cat == "TORCH_ALLOCATOR_BLOCK" else 1
            if old is not None:
                k = (guid, pid, old[0])
                totals[k][j] -= old[1]
                pending[k] = ts
            if typ != "FREE":
                label = _agent_label(a_type, a_index)
                live[(guid, cat, address)] = (label, int(size or 0))
                k = (guid, pid, label)
                totals.setdefault(k, [0, 0])[j] += int(size or 0)
                pending[k] = ts
    for k, t in pending.items():
        yield (*k, t, *totals[k])


def scratch(conn, where: str, params: list, agent_index: str = LABEL_INDEX) -> Iterator[tuple]:
    """(guid, pid, agent label, operation, start, end, size) of every scratch-memory operation in
    ``where`` (ROCm's scratch_memory view; ROCm's trace writers draw them), the operation named
    as rocprofv3 names it (SCRATCH_MEMORY_ALLOC ...). One without an agent is drawn under the
    agent of the process's scratch allocation before it. Labels as :func:`gpu_activity`'s. Read
    as iterated."""
    last = {}
    for guid, pid, op, start, end, size, a_type, a_index in conn.execute(
            f"SELECT guid, pid, operation, start, \"end\", size, agent_type,"
            f" {agent_column(agent_index)} FROM scratch_memory WHERE {where} ORDER BY start",
            params):
        label = _agent_label(a_type, a_index) if a_type is not None else \
            last.get((guid, pid), "GPU ?")
        last[(guid, pid)] = label
        yield guid, pid, label, f"SCRATCH_MEMORY_{op or 'UNKNOWN'}", start, end, size


def counter_values(conn, where: str, params: list, agent_index: str = LABEL_INDEX
                   ) -> Iterator[tuple]:
    """(guid, pid, agent label, counter name, start, end, value) of every hardware-counter value
    of a dispatch in ``where`` (ROCm's counters_collection view: one value per dispatch and
    counter). Labels as :func:`gpu_activity`'s. Read as iterated."""
    return ((g, p, _agent_label(t, ti), n, s, e, v) for g, p, t, ti, n, s, e, v in conn.execute(
        f'SELECT guid, pid, agent_type, {agent_column(agent_index)}, counter_name, start, "end",'
        f" value FROM counters_collection WHERE {where} ORDER BY start", params))
