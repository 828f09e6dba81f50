"""Cross-rank analysis: who is slow, by how much, and where the time goes, over one database per
rank (torchrun, Slurm, MPI: the rank comes from the recorded environment, see
:func:`rocpd.io.filters.file_ranks`).

    rep = rocpd.ranks.analyze(db)          # db: rocpd.connect(...) or a Dask connection
    rep.steps        # rank, step, start, end, duration_ns, compute_ns, collective_ns, kernels
    rep.per_rank     # one row per rank: step and kernel times, collective share, vs the median rank
    rep.slowest      # the ranks furthest above the median rank, and by how much
    rep.kernel_skew  # per kernel name: total time on the median, fastest and slowest rank
    rep.matrix("compute_ns")  # ranks x steps, for the heat map (rocpd.ranks.plots)

Steps are the ranges of one ROCTx name (``range_name``), or, when none is given, the repeating
range nested least deep (then the most frequent, then the longest in total): a per-iteration
``roctx.range("step")`` inside an enclosing "train" range is found as the step. Names that differ
only in their numbers ("step 12", "rank-3-step") count as one name, "step #" / "rank-#-step".

Each step of a rank gets the GPU kernels that start between its start and the next step's start
(the last step: one median step period), split into collectives (NCCL/RCCL kernel names,
``collective_regex``) and compute (every other kernel). In synchronous data parallelism all
ranks' steps last about as long, because the fast ranks wait in the collectives for the slow one:
the straggler is the rank with the most compute per step, and the least time in collectives. The
work is done per database by ``db.map`` (locally or on Dask workers); only small per-step and
per-kernel tables come back.
"""

from __future__ import annotations

import re
import sys

import numpy as np

from .. import _schema
from ..analysis import bounded
from ..errors import RocpdError
from ..io.filters import file_ranks
from ..summary import fastagg
from .tables import RankReport, build

COLLECTIVE_REGEX = r"nccl|rccl"
_DIGITS = re.compile(r"\d+")
_MARKERS_SQL = (
    "SELECT R.guid, R.tid, R.start, R.\"end\", "
    + _schema.region_name_sql("C.string", "E.extdata", "S.string") + " AS name"
    " FROM rocpd_region R"
    " LEFT JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid"
    " LEFT JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid"
    " LEFT JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid"
    " WHERE C.string LIKE 'MARKER%' AND R.\"end\" > R.start")


def family(name: str) -> str:
    """``name`` with every run of digits as "#": "step 12" -> "step #"."""
    return _DIGITS.sub("#", name or "")


def _ranges(src):
    """(guid, tid, start, end, name) of every ROCTx range (not marks) of one file."""
    return src.conn.execute(_MARKERS_SQL).fetchall()


def _depths(rows) -> list[int]:
    """Nesting depth of each range among the ranges of its thread (0: nothing encloses it)."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1], rows[i][2], -rows[i][3]))
    depth = [0] * len(rows)
    stack: list[tuple] = []
    for i in order:
        g, t, s, e, _ = rows[i]
        while stack and (stack[-1][0] != (g, t) or stack[-1][1] <= s):
            stack.pop()
        depth[i] = len(stack)
        stack.append(((g, t), e))
    return depth


def file_identity(src) -> list[dict]:
    """Per part: guid, path, rank, pid, host, and the step candidates (per range family: count,
    summed depth, total ns)."""
    ranks = file_ranks(src)
    procs = {g: (pid, host) for g, pid, host in src.conn.execute(
        "SELECT P.guid, P.pid, N.hostname FROM rocpd_info_process P"
        " LEFT JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid")}
    rows = _ranges(src)
    depth = _depths(rows)
    out = []
    for p in src.parts:
        cands: dict[str, list[int]] = {}
        for (g, _, s, e, name), d in zip(rows, depth, strict=True):
            if g == p.guid and name:
                c = cands.setdefault(family(name), [0, 0, 0])
                c[0] += 1
                c[1] += d
                c[2] += e - s
        pid, host = procs.get(p.guid, (None, None))
        out.append({"guid": p.guid, "path": src.path, "rank": ranks.get(p.guid), "pid": pid,
                    "host": host, "candidates": cands})
    return out


# Kernels read per rowid range of this many ids: the arrays and texts of a range (~60 MB), not
# of the whole table (10M kernels: ~1 GB held at once).
_CHUNK = 1_000_000


def _kernels(src, table, where: str = "", args=()):
    """(kernel_id, start, end) int64 arrays of one part's kernel table (within ``where``), read
    as fastagg does."""
    row = src.conn.execute(f"SELECT count(*), group_concat(kernel_id, ','), group_concat(start, ','),"
                           f" group_concat(\"end\", ',') FROM {table}{where}", args).fetchone()
    try:
        return [fastagg._parse(t, row[0]) for t in row[1:]]
    except fastagg._Unreadable:  # NULLs: keep the rows that have all three
        rows = src.conn.execute(f"SELECT kernel_id, start, \"end\" FROM {table}"
                                f"{where or ' WHERE 1'} AND kernel_id IS NOT NULL AND start IS NOT"
                                " NULL AND \"end\" IS NOT NULL", args).fetchall()
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        return [arr[:, 0], arr[:, 1], arr[:, 2]]


def _kernel_chunks(src, part, table):
    """:func:`_kernels` of one part a rowid range at a time (the whole table where its rows have
    no id column)."""
    if "id" not in part.columns["kernel_dispatch"]:
        yield _kernels(src, table)
        return
    # Two queries: SQLite answers a lone min() or max() of the rowid from the b-tree's ends.
    lo = src.conn.execute(f"SELECT min(id) FROM {table}").fetchone()[0]
    hi = src.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
    if lo is None:
        return
    for a in range(lo, hi + 1, _CHUNK):
        yield _kernels(src, table, " WHERE id >= ? AND id < ?", (a, a + _CHUNK))


def file_facts(src, step_family: str | None, collective_regex: str) -> list[dict]:
    """Per part: its steps [(start, end)], per step compute/collective ns and kernel counts, and
    total ns and calls per kernel name (whole run)."""
    coll = re.compile(collective_regex, re.I)
    steps: dict[str, list[tuple[int, int]]] = {}
    if step_family is not None:
        for g, _, s, e, name in _ranges(src):
            if name and family(name) == step_family:
                steps.setdefault(g, []).append((s, e))
    out = []
    for p in src.parts:
        summarised = _summarised(src, p, step_family, coll)
        if summarised is not None:  # a bounded run: every step from its summary
            out.append(summarised)
            continue
        st = sorted(steps.get(p.guid, []))
        fact = {"guid": p.guid, "steps": st, "compute": [0] * len(st), "collective": [0] * len(st),
                "kernels": [0] * len(st), "by_name": {}, "total_compute": 0, "total_collective": 0}
        out.append(fact)
        table = src.table(p, "kernel_dispatch")
        if table is None:
            continue
        sym = src.table(p, "info_kernel_symbol")
        names = {} if sym is None else dict(src.conn.execute(
            f"SELECT id, COALESCE(display_name, kernel_name) FROM {sym}"))
        edges = _edges(st)
        per = {key: np.zeros(len(st), np.int64) for key in ("collective", "compute", "kernels")}
        calls, ns, colls = {}, {}, {}  # per kernel id over the chunks
        for k, s, e in _kernel_chunks(src, p, table):
            if not len(k):
                continue
            d = e - s
            uniq, inv = np.unique(k, return_inverse=True)
            tot = np.bincount(inv, minlength=len(uniq))
            dur = np.zeros(len(uniq), np.int64)
            np.add.at(dur, inv, d)
            for x, n, t in zip(uniq.tolist(), tot.tolist(), dur.tolist(), strict=True):
                calls[x] = calls.get(x, 0) + n
                ns[x] = ns.get(x, 0) + t
                if x not in colls:
                    colls[x] = bool(coll.search(names.get(x) or ""))
            if st:
                is_coll = np.array([colls[x] for x in uniq.tolist()], dtype=bool)
                idx = np.searchsorted(edges, s, side="right") - 1
                inside = (idx >= 0) & (idx < len(st))
                kc = is_coll[inv]
                for key, mask in (("collective", inside & kc), ("compute", inside & ~kc)):
                    np.add.at(per[key], idx[mask], d[mask])
                per["kernels"] += np.bincount(idx[inside], minlength=len(st))
        if not calls:
            continue
        fact["total_collective"] = sum(ns[x] for x in ns if colls[x])
        fact["total_compute"] = sum(ns[x] for x in ns if not colls[x])
        for x in sorted(calls):  # in kernel id order, as one np.unique over the whole gave them
            name = names.get(x) or f"(kernel id {x})"
            c = fact["by_name"].setdefault(name, [0, 0])
            c[0] += calls[x]
            c[1] += ns[x]
        if st:
            fact.update((key, v.tolist()) for key, v in per.items())
    return out


def _edges(st):
    """Each step's first time, and the end of the last: one median step period after its start,
    or its end if later."""
    if not st:
        return None
    starts = np.array([a for a, _ in st], np.int64)
    period = int(np.median(np.diff(starts))) if len(st) > 1 else st[0][1] - st[0][0]
    return np.append(starts, max(st[-1][1], starts[-1] + period))


def _summarised(src, p, step_family, coll) -> dict | None:
    """A bounded run's facts from its step summaries (rocprof run --max-size: every step has
    one, most keep no records), when its steps are of ``step_family``; else None."""
    table = f"rocprof_step_summary{p.suffix}"
    if step_family is None or src.conn.execute(
            "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?",
            (table,)).fetchone() is None:
        return None
    rows = src.conn.execute(
        f'SELECT T.step, S.string, T.start, T."end", T.kernels FROM main."{table}" T LEFT JOIN '
        f'main."rocpd_string{p.suffix}" S ON S.id = T.name_id ORDER BY T.step').fetchall()
    if not rows or family(rows[0][1]) != step_family:
        return None
    index = {r[0]: i for i, r in enumerate(rows)}
    fact = {"guid": p.guid, "steps": [(r[2], r[3]) for r in rows], "compute": [0] * len(rows),
            "collective": [0] * len(rows), "kernels": [r[4] for r in rows], "by_name": {},
            "total_compute": 0, "total_collective": 0}
    for step, name, calls, total in src.conn.execute(
            f'SELECT K.step, COALESCE(S.string, \'\'), K.calls, K.total_ns FROM '
            f'main."rocprof_step_kernels{p.suffix}" K LEFT JOIN main."rocpd_string{p.suffix}" S '
            f'ON S.id = K.name_id'):
        key = "collective" if coll.search(name) else "compute"
        if step in index:
            fact[key][index[step]] += total
        fact["total_" + key] += total
        c = fact["by_name"].setdefault(name or "(unnamed kernel)", [0, 0])
        c[0] += calls
        c[1] += total
    return fact


def choose_step(identities: list[dict]) -> str | None:
    """The step family: repeating (>= 2 on some rank), nested least deep on average, then on most
    ranks, then most frequent, then longest in total."""
    agg: dict[str, list] = {}
    for ident in identities:
        for fam, (n, depth, total) in ident["candidates"].items():
            a = agg.setdefault(fam, [0, 0, 0, 0, 0])
            a[0] += n
            a[1] += depth
            a[2] += total
            a[3] += 1
            a[4] = max(a[4], n)
    cands = [(round(a[1] / a[0], 1), -a[3], -a[0], -a[2], fam) for fam, a in agg.items() if a[4] >= 2]
    return min(cands)[4] if cands else None


def analyze(db, range_name: str | None = None, collective_regex: str = COLLECTIVE_REGEX,
            skip_steps: int = 0) -> RankReport:
    """The cross-rank view of ``db`` (see the module's doc). ``skip_steps``: leave out each rank's
    first N steps (warm-up) from the step statistics."""
    try:
        re.compile(collective_regex)
    except re.error as e:
        raise RocpdError(f"bad collective kernel regex {collective_regex!r}: {e}") from None
    identities = [i for found in db.map(file_identity, label="ranks") for i in found]
    notes = []
    detected = range_name is None
    if detected:
        range_name = choose_step(identities)
        if range_name is None:
            notes.append("no repeating ROCTx range: no step times (name one with --range)")
    else:
        # A name and its numbered variants alike ("step" is not "step 3"; "step 3" is "step #").
        known = {fam for i in identities for fam in i["candidates"]}
        if family(range_name) not in known:
            raise RocpdError(f"no ROCTx range named {range_name!r} in these databases; ranges seen:"
                             f" {', '.join(sorted(known)[:10]) or '(none)'}")
        range_name = family(range_name)
    for f in bounded.facts(db):  # rocprof run --max-size: most steps are summaries only
        notes.append(f"a bounded run ({f.get('steps', 0)} steps, {f.get('steps_with_detail', 0)} "
                     "kept whole): every step's times from its summary (the steps kept whole "
                     "have their records too)")
    facts = [f for found in db.map(file_facts, range_name, collective_regex, label="rank facts")
             for f in found]
    return build(identities, facts, range_name, detected, skip_steps, notes)


def warn(notes: list[str]) -> None:
    for n in notes:
        print(f"rocpd: note: {n}", file=sys.stderr)
