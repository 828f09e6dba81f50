"""The OTF2 archive's locations and location groups, found before any event is written (a
location's name must be final when its writer is made, and a name two locations share gets its
process and thread or GPU): from SQL aggregates over each file, holding nothing per record.

Location keys: ("t", guid, pid, tid, suffix) for a thread (suffix ", memory" for its
allocations), ("s", guid, pid, agent label, stream id) for a GPU stream, ("scratch", guid, pid,
agent label) for a GPU's scratch memory. Group keys: ("p", guid, pid) for a process, ("g", guid,
pid, agent label) for a GPU under it.
"""

from __future__ import annotations

from . import _activity as act
from . import agent_column

# A copy belongs to the GPU taking part: its destination, or its source when that is the CPU
# (as rocpd.export._activity's GPU query reads it); per stream, its first op's stream name.
_GPU_STREAMS = """
SELECT guid, pid, agent_type, {k_index}, stream_id, stream, min(start) FROM kernels
 WHERE {w} GROUP BY guid, pid, agent_type, {k_index}, stream_id
UNION ALL
SELECT guid, pid, CASE WHEN dst_agent_type = 'CPU' THEN src_agent_type ELSE dst_agent_type END AS t,
       CASE WHEN dst_agent_type = 'CPU' THEN {src_index} ELSE {dst_index} END AS i,
       stream_id, stream_name, min(start) FROM memory_copies
 WHERE {w} GROUP BY guid, pid, t, i, stream_id
"""


class Layout:
    """Every file's locations ({key: [group key, name, is_gpu, description]}) and groups
    ({key: [host, name, parent group key or None, GPU paradigm or None]}), in order of finding."""

    def __init__(self):
        self.locations: dict[tuple, list] = {}
        self.groups: dict[tuple, list] = {}

    def add_file(self, conn, where: str, params: list, flt, agent_index: str) -> None:
        hosts = dict(conn.execute("SELECT guid, hostname FROM rocpd_info_node"))
        cmds = {(g, p): c for g, p, c in conn.execute(
            "SELECT guid, pid, command FROM rocpd_info_process")}
        tnames = {(g, p, t): n for g, p, t, n in conn.execute(
            "SELECT guid, pid, tid, name FROM rocpd_info_thread")}

        def group(guid, pid):
            key = ("p", guid, pid)
            if key not in self.groups:
                self.groups[key] = [hosts.get(guid) or "host",
                                    f"{cmds.get((guid, pid)) or 'process'} ({pid})", None, None]
            return key

        def thread(guid, pid, tid, suffix=""):
            name = (tnames.get((guid, pid, tid)) or f"Thread {tid}") + suffix
            self.locations.setdefault(("t", guid, pid, tid, suffix),
                                      [group(guid, pid), name, False, f"pid {pid} tid {tid}"])

        def gpu(guid, pid, label, key, name):
            g = ("g", guid, pid, label)
            self.groups.setdefault(g, [self.groups[group(guid, pid)][0], f"{label} ({pid})",
                                       ("p", guid, pid), None])
            self.locations.setdefault(key, [g, name, True, f"pid {pid} {label}"])

        for guid, pid, tid, _first in conn.execute(
                f"SELECT guid, pid, tid, min(id) FROM regions WHERE {where} GROUP BY guid, pid, tid"
                " ORDER BY 4", params):
            thread(guid, pid, tid)
        # The process's API (its first API call's) names the paradigm of its GPU work.
        for guid, pid, cat, _first in conn.execute(
                f"SELECT guid, pid, category, min(id) FROM regions WHERE {where} AND (category"
                " LIKE 'HIP%' OR category LIKE 'HSA%' OR category LIKE 'CUDA%') GROUP BY guid, pid",
                params):
            g = self.groups[group(guid, pid)]
            if g[3] is None:
                g[3] = "CUDA" if cat.upper().startswith("CUDA") else "HIP"
        w = where.replace('"end"', "timestamp").replace("start", "timestamp")
        for marker in (True, False):  # ROCTx marks, then the other samples
            cond = "category LIKE 'MARKER%'" if marker else \
                "(category IS NULL OR category NOT LIKE 'MARKER%')"
            for guid, pid, tid, _first in conn.execute(
                    f"SELECT guid, pid, tid, min(timestamp) FROM samples WHERE {cond} AND {w}"
                    " GROUP BY guid, pid, tid ORDER BY 4", params):
                thread(guid, pid, tid)
        for guid, pid, tid, _first in conn.execute(
                f"SELECT guid, pid, tid, min(start) FROM memory_allocations WHERE {where} AND level"
                " IS NOT 'SCRATCH' AND type IN ('ALLOC', 'REALLOC', 'FREE')"
                " GROUP BY guid, pid, tid ORDER BY 4", params):
            thread(guid, pid, tid, ", memory")
        for guid, pid, label, sid, stream in self._streams(conn, where, params, flt, agent_index):
            gpu(guid, pid, label, ("s", guid, pid, label, sid), stream or f"Stream {sid}")
        for guid, pid, label, *_ in act.scratch(conn, where, params, agent_index):
            gpu(guid, pid, label, ("scratch", guid, pid, label), "Scratch memory")

    @staticmethod
    def _streams(conn, where, params, flt, agent_index) -> list[tuple]:
        """(guid, pid, agent label, stream id, its first op's stream name) of every stream with
        GPU work in view, in order of its first op. Kernel-name filters are regexes SQLite
        does not have: with them, the ops themselves are read (as they will be written)."""
        if flt.include or flt.exclude:
            first: dict[tuple, str] = {}
            for _k, guid, _n, pid, _a, label, sid, stream, *_ in act.gpu_activity(
                    conn, where, params, flt, agent_index):
                first.setdefault((guid, pid, label, sid), stream)
            return [(*k, s) for k, s in first.items()]
        sql = _GPU_STREAMS.format(w=where, k_index=agent_column(agent_index),
                                  src_index=agent_column(agent_index, "src_"),
                                  dst_index=agent_column(agent_index, "dst_"))
        first: dict[tuple, tuple] = {}
        for guid, pid, a_type, a_index, sid, stream, start in conn.execute(sql, [*params, *params]):
            key = (guid, pid, act._agent_label(a_type, a_index), sid)
            if key not in first or start < first[key][0]:
                first[key] = (start, stream)
        return [(*k, s) for k, (_t, s) in sorted(first.items(), key=lambda kv: kv[1][0])]

    def finish(self) -> None:
        """Location names unique in the archive: a shared one gets its process and thread."""
        seen: dict[str, int] = {}
        for loc in self.locations.values():
            seen[loc[1]] = seen.get(loc[1], 0) + 1
        for loc in self.locations.values():
            if seen[loc[1]] > 1:
                loc[1] = f"{loc[1]} [{loc[3]}]"
