"""Each process's call-stack samples for the analysis, held compactly: per sample its thread,
time and innermost Python line as integers (the line's texts once, as pandas categories), about
30 bytes a sample where a row of Python objects took ~450 (10M samples: 4.7 GB before).

Read a rowid range at a time where the file allows (summary.sample_counts: one join of samples
to their events, parsed in numpy; each stack's line looked up once), else from the samples view
row by row (a Dask connection, a file whose texts do not parse). Frames: ``tid``, ``timestamp``,
``site`` ("file:line") and ``function`` (categorical; missing where a sample has no frame), and
``line`` (the code of the (site, function) pair, of ``frame.attrs["lines"]``, in order of
first appearance). Rows are in the order stored (each thread's in time order), not sorted by
time across threads.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd

from ..io.connection import Connection
from ..summary import sample_counts
from ..summary.samples import Stacks, sample_rows


class _Lines:
    """The (site, function) of each stack's innermost Python frame, coded in order of first use."""

    def __init__(self, stacks: Stacks):
        self.stacks, self.codes, self.pairs = stacks, {}, []
        self.of_stack: dict[tuple, int] = {}

    def code(self, guid: str, sid) -> int:
        key = (guid, sid)
        got = self.of_stack.get(key)
        if got is None:
            frames = self.stacks.frames(guid, sid)
            py = [f for f in frames if f.kind == "python"] or list(frames)
            f = py[-1] if py else None
            pair = (f"{f.file}:{f.line}", f.function) if f else (None, None)
            got = self.codes.setdefault(pair, len(self.codes))
            if got == len(self.pairs):
                self.pairs.append(pair)
            self.of_stack[key] = got
        return got


def _ranged(db, lines: _Lines) -> dict[str, list]:
    """{guid: [(tids, times, line codes)]} read a range at a time (sample_counts' reader)."""
    out: dict[str, list] = {}
    for src in db.sources():
        for part, table in src.tables("sample"):
            threads = sample_counts.thread_tracks(src, part)
            tids = np.array([threads[t][1] for t in sorted(threads)], dtype=np.int64)
            for stacks, times, at in sample_counts.thread_samples(src, part, table, None,
                                                                  threads):
                uniq, inv = np.unique(stacks, return_inverse=True)
                codes = np.array([lines.code(part.guid, s) for s in uniq.tolist()], np.int32)
                out.setdefault(part.guid, []).append((tids[at], times, codes[inv]))
    return out


def _rows(rows, lines: _Lines) -> dict[str, list]:
    """The same from the samples view's rows, a Python row per sample (time order)."""
    by: dict[str, list] = {}
    for guid, _pid, tid, ts, sid in rows:
        by.setdefault(guid, []).append((int(tid), int(ts), lines.code(guid, sid)))
    return {g: [tuple(np.array(c, dtype=np.int64) for c in zip(*rs, strict=True))]
            for g, rs in by.items()}


def _frame(pieces: list, lines: _Lines) -> pd.DataFrame:
    sites = list(dict.fromkeys(s for s, _ in lines.pairs if s is not None))
    funcs = list(dict.fromkeys(f for _, f in lines.pairs if f is not None))
    site_at = {x: i for i, x in enumerate(sites)}
    func_at = {x: i for i, x in enumerate(funcs)}
    site_of = np.array([site_at.get(s, -1) for s, _ in lines.pairs] or [-1], dtype=np.int32)
    func_of = np.array([func_at.get(f, -1) for _, f in lines.pairs] or [-1], dtype=np.int32)
    # One column at a time, each range's piece let go once joined: the peak is the frame and
    # one column's pieces, not two copies of everything.
    columns = [list(c) for c in zip(*pieces, strict=True)] if pieces else [[], [], []]
    pieces.clear()
    joined = []
    for t in (np.int64, np.int64, np.int32):
        c = columns.pop(0)
        joined.append(np.concatenate(c).astype(t, copy=False) if c else np.zeros(0, t))
        del c
    tid, ts, code = joined
    df = pd.DataFrame({
        "tid": tid, "timestamp": ts,
        "site": pd.Categorical.from_codes(site_of[code], categories=sites),
        "function": pd.Categorical.from_codes(func_of[code], categories=funcs),
        "line": code})
    df.attrs["lines"] = list(lines.pairs)
    return df


def attach_samples(db, procs) -> None:
    """Each process's call-stack samples as ``p.samples`` (see the module's text); an empty
    frame where none were taken."""
    lines, by = _Lines(None), None
    if type(db) is Connection:
        try:
            if sample_counts.has_samples(db):
                lines = _Lines(Stacks(db))
                by = _ranged(db, lines)
            else:
                by = {}
        except (sample_counts.Unreadable, sqlite3.Error):
            lines, by = _Lines(None), None
    if by is None:  # the samples view, row by row
        try:
            rows = sample_rows(db)
        except Exception:  # noqa: BLE001 - a database without the samples view has no samples
            rows = []
        by = {}
        if rows:
            lines = _Lines(Stacks(db))
            by = _rows(rows, lines)
    frames: dict[str, pd.DataFrame] = {}  # a file part's samples, whichever of its processes
    for p in procs:
        if p.guid not in frames:
            frames[p.guid] = _frame(by.pop(p.guid, []), lines)
        p.samples = frames[p.guid]
