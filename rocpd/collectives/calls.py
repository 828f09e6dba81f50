"""One row per collective call of every database, with the kernel that carried it.

The kernel of a call: the NCCL/RCCL kernel whose launch (the runtime/driver call with the
kernel's correlation id) happened on the call's thread inside the call, where API calls were
traced; otherwise the first not yet taken collective kernel of the process that starts after
the call began (calls of one process launch their kernels in call order). ``kernel_match`` says
which ("launch", "order" or "" for none).
"""

from __future__ import annotations

import json

import pandas as pd

from ..io.filters import file_ranks
from .bandwidth import add_bandwidth

CATEGORY = "RCCL_API"
KERNEL_PATTERN = r"nccl|rccl"
_INT_ARGS = ("count", "bytes", "root", "peer", "rank", "nranks", "nnodes", "nchannels", "seq")
_TEXT_ARGS = ("datatype", "comm", "stream", "comm_name", "algo", "proto")

_CALLS_SQL = (
    "SELECT R.guid, R.id, R.tid, R.start, R.\"end\", S.string, A.name, A.value"
    " FROM rocpd_region R"
    " JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid"
    " JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid"
    " JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid"
    " LEFT JOIN rocpd_arg A ON A.event_id = E.id AND A.guid = E.guid"
    " WHERE C.string = ?")


def _file_calls(src) -> list[dict]:
    import re

    found = src.conn.execute(_CALLS_SQL, (CATEGORY,)).fetchall()
    if not found:
        return []
    ranks = file_ranks(src)
    procs = {g: (pid, host) for g, pid, host in src.conn.execute(
        "SELECT P.guid, P.pid, N.hostname FROM rocpd_info_process P"
        " LEFT JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid")}
    rows: dict[tuple, dict] = {}
    for guid, rid, tid, start, end, name, arg, value in found:
        r = rows.get((guid, rid))
        if r is None:
            pid, host = procs.get(guid, (None, None))
            r = rows[(guid, rid)] = {
                "guid": guid, "path": src.path, "pid": pid, "host": host or "",
                "rank_env": ranks.get(guid), "tid": tid, "start": start, "end": end,
                "function": name, "op": name[4:] if name.startswith(("nccl", "rccl")) else name}
        if arg in _INT_ARGS:
            try:
                r[arg] = int(value)
            except (TypeError, ValueError):
                pass
        elif arg in _TEXT_ARGS:
            r[arg] = value
    out = list(rows.values())
    pat = re.compile(KERNEL_PATTERN, re.I)
    has_api = src.conn.execute(
        "SELECT 1 FROM regions WHERE category LIKE 'CUDA_%' OR category LIKE 'HIP_%' LIMIT 1"
    ).fetchone() is not None
    kernels = [k for k in src.conn.execute(
        "SELECT guid, tid, start, \"end\", stream_id, corr_id, name FROM kernels ORDER BY start")
        if pat.search(k[6] or "")]
    launch = {}
    if has_api and kernels:
        corr = {(k[0], k[5]) for k in kernels}
        for g, tid, start, c in src.conn.execute(
                "SELECT guid, tid, start, corr_id FROM regions WHERE category NOT IN (?, ?)"
                " AND corr_id != 0", (CATEGORY, "MARKER_CORE_API")):
            if (g, c) in corr:
                launch[(g, c)] = (tid, start)
    _link(out, kernels, launch)
    return out


def _link(out: list[dict], kernels: list, launch: dict) -> None:
    """Sets kernel/kernel_start/kernel_end/kernel_match on each call (see the module's doc).
    Calls and kernels are walked in time order: each call takes the earliest kernel not yet
    taken that qualifies."""
    import bisect

    by_launch: dict[tuple, list] = {}  # (guid, tid) -> [(launch time, kernel index)] sorted
    by_start: dict[str, list] = {}     # guid -> kernel indices by start (kernels are sorted)
    for i, k in enumerate(kernels):
        at = launch.get((k[0], k[5]))
        if at is not None:
            by_launch.setdefault((k[0], at[0]), []).append((at[1], i))
        by_start.setdefault(k[0], []).append(i)
    for v in by_launch.values():
        v.sort()
    taken: set[int] = set()
    next_free: dict[str, int] = {}
    for r in sorted(out, key=lambda r: r["start"]):
        r.update(kernel="", kernel_start=None, kernel_end=None, kernel_match="")
        pick, how = None, ""
        if launch:
            cand = by_launch.get((r["guid"], r["tid"]), [])
            j = bisect.bisect_left(cand, (r["start"], -1))
            while j < len(cand) and cand[j][0] <= r["end"]:
                if cand[j][1] not in taken:
                    pick, how = cand[j][1], "launch"
                    break
                j += 1
        else:
            idx = by_start.get(r["guid"], [])
            j = next_free.get(r["guid"], 0)
            while j < len(idx) and (idx[j] in taken or kernels[idx[j]][2] < r["start"]):
                j += 1
            next_free[r["guid"]] = j
            if j < len(idx):
                pick, how = idx[j], "order"
        if pick is not None:
            taken.add(pick)
            k = kernels[pick]
            r.update(kernel=k[6], kernel_start=k[2], kernel_end=k[3], kernel_match=how)


def calls(db):
    """DataFrame: one row per collective call (see the module's doc), with message size, time
    and bandwidth (:mod:`rocpd.collectives.bandwidth`). Empty when none was recorded."""
    rows = [r for found in db.map(_file_calls, label="collectives") for r in found]
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for col in _INT_ARGS:
        if col not in df:
            df[col] = pd.NA
    for col in _TEXT_ARGS:
        if col not in df:
            df[col] = ""
    df["rank"] = df["rank"].fillna(df["rank_env"])
    df = df.sort_values(["start"]).reset_index(drop=True)
    return add_bandwidth(df)


def plugin_state(db) -> list[str]:
    """Notes on how collectives were captured per database: which profiler interface NCCL used,
    or that --rccl-trace was asked for and NCCL never loaded the plugin (kernels only)."""
    notes = []
    for p in getattr(db, "parts", ()):
        plugin = p.metadata.get("rocprof.nccl.plugin", "")
        if plugin.startswith("ncclProfiler"):
            notes.append(f"{p.guid[:8]}: collective calls through {plugin}")
            continue
        # Python processes store "not loaded: ..." at start; native programs store nothing
        if plugin or _asked(p.metadata.get("rocprof.options", "")):
            notes.append(f"{p.guid[:8]}: --rccl-trace was asked for but NCCL never loaded the "
                         "profiler plugin (NCCL older than 2.27, NCCL_PROFILER_PLUGIN overridden, "
                         "or no communicator): collectives are in the kernels only")
    return notes


def _asked(options_json: str) -> bool:
    try:
        return bool(json.loads(options_json or "{}").get("rccl_trace"))
    except ValueError:
        return False
