"""Call-stack samples: top functions (self/total), samples inside a ROCTx range or a time
window, collapsed stacks.

Storage (written by rocprof's sampler, capture/sampling/): each unique stack is a node of a
tree, stored once as a ``rocpd_event`` row whose category ends in ``_SAMPLE_STACK``
(``PYTHON_SAMPLE_STACK``, or ``CPU_SAMPLE_STACK`` with native frames): ``stack_id`` is the
node id, ``parent_stack_id`` the node of the caller (0 at the outermost frame), ``call_stack``
the node's own frame as JSON ``{"function", "file", "line", "kind"}`` and ``line_info``
``{"file", "line"}``. A sample is a ``rocpd_sample`` row on its thread's track whose event
(category ``PYTHON_SAMPLE``/``CPU_SAMPLE``) has ``stack_id`` = its innermost node.
Samples of a script run by ``rocprof run`` start at the script's ``<module>`` frame (the
launcher's own frames, runpy's included, are cut when the sampler resolves them); a sample
taken while the launcher itself ran (reading the script, importing its own modules) is the one
frame ``<rocprof launcher>``; samples taken through the in-process API keep every frame.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass

from .. import _schema
from ..errors import RocpdError
from ..io.connection import Connection
from ..textfmt import TOP_ROWS, more_rows
from . import sample_counts

SAMPLE_CATEGORIES = ("PYTHON_SAMPLE", "CPU_SAMPLE")


@dataclass(frozen=True)
class Frame:
    function: str
    file: str
    line: int
    kind: str = "python"

    def label(self, lines: bool = False) -> str:
        where = f"{self.file}:{self.line}" if lines else self.file
        return f"{self.function} ({where})"


def _db(db):
    return Connection(db) if isinstance(db, (str, bytes)) or hasattr(db, "__fspath__") else db


class Stacks:
    """The stack trees of every database part in a connection, keyed by (guid, stack_id)."""

    def __init__(self, db):
        self._nodes: dict[tuple[str, int], tuple[int, Frame]] = {}
        self._memo: dict[tuple[str, int], tuple[Frame, ...]] = {}
        rows = db.execute(
            "SELECT E.guid, E.stack_id, E.parent_stack_id, E.call_stack FROM rocpd_event E"
            " JOIN rocpd_string S ON S.id = E.category_id AND S.guid = E.guid"
            " WHERE S.string LIKE '%\\_SAMPLE\\_STACK' ESCAPE '\\'")
        for guid, sid, parent, cs in rows:
            try:
                d = json.loads(cs or "{}")
            except ValueError:
                d = {}
            self._nodes[(guid, sid)] = (parent or 0, Frame(str(d.get("function", "?")),
                                                           str(d.get("file", "?")),
                                                           int(d.get("line", 0) or 0),
                                                           str(d.get("kind", "python"))))

    def __len__(self) -> int:
        return len(self._nodes)

    def frames(self, guid: str, stack_id: int) -> tuple[Frame, ...]:
        """Frames of a stack, outermost first."""
        key = (guid, stack_id)
        got = self._memo.get(key)
        if got is not None:
            return got
        chain, k, seen = [], key, set()
        while k[1] and k in self._nodes and k not in seen:
            seen.add(k)
            cached = self._memo.get(k)
            if cached is not None:
                chain.extend(reversed(cached))
                break
            parent, frame = self._nodes[k]
            chain.append(frame)
            k = (guid, parent)
        out = tuple(reversed(chain))
        self._memo[key] = out
        return out


def _time_zero(db) -> int:
    row = db.execute("SELECT MIN(start) FROM rocpd_info_process").fetchone()
    return int(row[0] or 0) if row else 0


def _sample_sql(db, window=None, roctx_range=None, tid=None, pid=None) -> tuple[str, list]:
    """The query of :func:`sample_rows`' rows (unordered) and its parameters."""
    where = [f"category IN ({','.join('?' * len(SAMPLE_CATEGORIES))})"]
    params: list = list(SAMPLE_CATEGORIES)
    if window is not None:
        t0 = _time_zero(db)
        where.append("timestamp >= ? AND timestamp < ?")
        params += [t0 + int(window[0]), t0 + int(window[1])]
    if tid is not None:
        where.append("tid = ?")
        params.append(int(tid))
    if pid is not None:
        where.append("pid = ?")
        params.append(int(pid))
    sql = f"SELECT guid, pid, tid, timestamp, stack_id FROM samples WHERE {' AND '.join(where)}"
    if roctx_range is not None:
        ranges = db.execute(
            "SELECT guid, pid, tid, start, \"end\" FROM regions WHERE category LIKE 'MARKER%'"
            f" AND (name = ? OR {_schema.roctx_message_sql()} = ?)",
            (roctx_range, roctx_range)).fetchall()
        if not ranges:
            raise RocpdError("no ROCTx range with this name", roctx_range)
        sql = (f"SELECT S.guid, S.pid, S.tid, S.timestamp, S.stack_id FROM ({sql}) S"
               " WHERE EXISTS (SELECT 1 FROM regions R WHERE R.category LIKE 'MARKER%'"
               f" AND (R.name = ? OR {_schema.roctx_message_sql('R.extdata')} = ?)"
               " AND R.guid = S.guid AND R.tid = S.tid"
               " AND S.timestamp >= R.start AND S.timestamp <= R.\"end\")")
        params += [roctx_range, roctx_range]
    return sql, params


def sample_rows(db, *, window=None, roctx_range=None, tid=None, pid=None):
    """[(guid, pid, tid, timestamp, stack_id)] of stack samples, optionally only those
    - in ``window`` = (t0, t1): ns from the start of the run, [t0, t1);
    - inside any ROCTx range named ``roctx_range`` on the same thread (nested ranges count);
    - of thread ``tid`` / process ``pid``.
    One row per sample: what needs only how often each stack was seen reads stack_counts."""
    sql, params = _sample_sql(db, window, roctx_range, tid, pid)
    return db.execute(sql + " ORDER BY timestamp", params).fetchall()


def stack_counts(db, *, by_thread: bool = False, **filters) -> list[tuple]:
    """[(guid, pid, tid, stack_id, samples)] of the samples :func:`sample_rows` gives (same
    filters), counted per stack by SQLite (per thread too with ``by_thread``, else pid and tid
    are None), in order of each stack's first sample: a row per stack, not per sample."""
    if filters.get("roctx_range") is None:
        window = filters.get("window")
        if window is not None:
            t0 = _time_zero(db)
            window = (t0 + int(window[0]), t0 + int(window[1]))
        tid, pid = (None if filters.get(k) is None else int(filters[k]) for k in ("tid", "pid"))
        rows = sample_counts.stack_counts(db, by_thread, window, tid, pid)
        if rows is not None:
            return rows
    sql, params = _sample_sql(db, **filters)
    keys = "guid, pid, tid, stack_id" if by_thread else "guid, NULL, NULL, stack_id"
    group = "guid, pid, tid, stack_id" if by_thread else "guid, stack_id"
    return db.execute(f"SELECT {keys}, count(*) FROM ({sql}) GROUP BY {group}"
                      " ORDER BY min(timestamp)", params).fetchall()


def sample_count(db, **filters) -> int:
    """How many samples :func:`sample_rows` gives (same filters), counted by SQLite."""
    sql, params = _sample_sql(db, **filters)
    return db.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0]


def collapsed(db, *, lines: bool = False, by_thread: bool = False, **filters) -> Counter:
    """Counter {"outer;...;inner": samples} — the folded format of flamegraph.pl/speedscope."""
    db = _db(db)
    stacks = Stacks(db)
    out: Counter = Counter()
    for guid, pid, tid, sid, count in stack_counts(db, by_thread=by_thread, **filters):
        parts = [f.label(lines).replace(";", ":") for f in stacks.frames(guid, sid)]
        if by_thread:
            parts.insert(0, f"pid {pid} tid {tid}")
        out[";".join(parts) or "<no Python frames>"] += count
    return out


def top_functions(db, *, by: str = "self", limit: int | None = 20, lines: bool = False,
                  **filters) -> list[dict]:
    """Functions by samples where they were the innermost frame (self) or anywhere on the
    stack (total, counted once per sample even when recursive). Rows: function, file, (line),
    self, total, self_pct, total_pct."""
    if by not in ("self", "total"):
        raise RocpdError("by must be 'self' or 'total'", by)
    db = _db(db)
    stacks = Stacks(db)
    self_c: Counter = Counter()
    total_c: Counter = Counter()
    n = 0
    for guid, _pid, _tid, sid, count in stack_counts(db, **filters):
        frames = stacks.frames(guid, sid)
        n += count
        if not frames:
            continue
        keys = [(f.function, f.file, f.line if lines else None) for f in frames]
        self_c[keys[-1]] += count
        for k in dict.fromkeys(keys):  # once per sample even when recursive, in stack order
            total_c[k] += count
    rows = []
    for k in total_c:
        row = {"function": k[0], "file": k[1]}
        if lines:
            row["line"] = k[2]
        row.update(self=self_c[k], total=total_c[k],
                   self_pct=100.0 * self_c[k] / n if n else 0.0,
                   total_pct=100.0 * total_c[k] / n if n else 0.0)
        rows.append(row)
    rows.sort(key=lambda r: (-r[by], -r["total" if by == "self" else "self"], r["function"]))
    return rows[:limit] if limit else rows


def sampling_info(db) -> dict[str, str]:
    """Sampling rate, mode, native flag and taken/missed counts from the metadata."""
    db = _db(db)
    rows = db.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.sampling.%'")
    return {tag[len("rocprof.sampling."):]: value for tag, value in rows}


def missed_and_taken(db) -> tuple[int, int]:
    """(samples missed, samples taken) over every database of ``db``: missed ticks are counted
    among the dropped records (rocprof.dropped_records.sampling), taken ones in the metadata."""
    taken = 0
    for _guid, tag, value in db.metadata():
        if tag == "rocprof.sampling.samples_taken" and value.isdigit():
            taken += int(value)
    return db.dropped_records().get("rocprof.dropped_records.sampling", 0), taken


def _file_counts(src):
    """(samples, Counter of innermost (function, file, line), Counter of (function, file) on the
    stack) of one file: run where the file is (a Dask worker's too)."""
    try:
        try:
            rows = [r[:5] for r in sample_counts.file_stack_counts(src, False)]
        except (sample_counts.Unreadable, sqlite3.Error):
            rows = stack_counts(src.conn)  # the SQL path
        # The stack nodes are found by a scan of every event (kernels' included): skip it when
        # there is no sample to resolve (10M kernels: 2.5 s).
        stacks = Stacks(src.conn) if rows else None
    except Exception:  # noqa: BLE001 - a file without the samples view has none
        return 0, Counter(), Counter()
    self_c: Counter = Counter()
    total_c: Counter = Counter()
    for guid, _pid, _tid, sid, count in rows:
        frames = stacks.frames(guid, sid)
        if frames:
            f = frames[-1]
            self_c[(f.function, f.file, f.line)] += count
            for k in dict.fromkeys((x.function, x.file) for x in frames):
                total_c[k] += count
    return sum(r[4] for r in rows), self_c, total_c


def format_summary(db, top: int = TOP_ROWS, cut: bool = True, funcs: int | None = None) -> str:
    """The samples table of `rocprof run -S` and `rocpd summary`: the ``top`` lines where the
    sampled threads were (innermost frame: self) and the ``funcs`` (default ``top``) functions
    that were on the stack (total), with counts, each cut saying how to see the rest (``cut``
    False: every row); "" when no samples were taken."""
    db = _db(db)
    n, self_c, total_c = 0, Counter(), Counter()
    for k, s_, t_ in db.map(_file_counts, label="samples"):
        n, self_c, total_c = n + k, self_c + s_, total_c + t_
    if not n:
        return ""
    info = {t[len("rocprof.sampling."):]: v for _, t, v in db.metadata()
            if t.startswith("rocprof.sampling.")}
    how = ", ".join(x for x in (f"{info['hz']} Hz" if info.get("hz") else "",
                                f"{info['mode']} time" if info.get("mode") else "") if x)
    head = f"== SAMPLES ({n} call-stack samples{', ' + how if how else ''}) =="
    all_lines = sorted(self_c.items(), key=lambda kv: (-kv[1], kv[0]))
    all_funcs = sorted(total_c.items(), key=lambda kv: (-kv[1], kv[0]))
    lines_ = all_lines[:top] if cut else all_lines
    funcs = all_funcs[:top if funcs is None else funcs] if cut else all_funcs
    width = max([len(k[0]) for k, _ in lines_ + funcs] + [8])
    out = [head, f"{'Self':>6} {'Self%':>6}  {'Function':<{width}}  Line"]
    out += [f"{c:>6} {100 * c / n:>5.1f}%  {fn:<{width}}  {file}:{line}"
            for (fn, file, line), c in lines_]
    if len(all_lines) > len(lines_):
        out.append(more_rows(len(all_lines) - len(lines_), "rocpd samples DB --lines --all"))
    out += ["", f"{'Total':>6} {'Total%':>6}  {'Function':<{width}}  File"]
    out += [f"{c:>6} {100 * c / n:>5.1f}%  {fn:<{width}}  {file}" for (fn, file), c in funcs]
    if len(all_funcs) > len(funcs):
        out.append(more_rows(len(all_funcs) - len(funcs), "rocpd samples DB --by total --all"))
    out.append("(flame graph: rocpd samples DB --flamegraph FILE.svg; its input: --collapsed FILE)")
    return "\n".join(out) + "\n"
