"""Call-stack samples counted per stack a rowid range at a time, in numpy, as the kernel summary
counts kernels (fastagg): the ``samples`` view's joins and SQLite's sorting GROUP BY took ~3 µs
a sample (30 s for 10M), where each range here is one plain join of samples to their events
streamed out as integer texts.

Per file part: the sample categories' string ids and the tracks of known threads (what the
view's joins keep) are read first; then each range of ``rocpd_sample`` rows gives, for the rows
whose event is a call-stack sample, the stack id, time and track. Counts and first times are
summed per stack (per thread too) and merged over ranges and parts. A part whose texts do not
parse whole (a NULL stack id, a non-integer time) is answered by the SQL path instead.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from ..io.connection import Connection
from .fastagg import _parse, _Unreadable, rowid_ranges, rowid_span

_RANGE = 1 << 20  # samples of one query: ~40 MB of text while it is parsed
_CATEGORIES = ("PYTHON_SAMPLE", "CPU_SAMPLE")
Unreadable = _Unreadable  # what callers catch to take the SQL path


def thread_tracks(src, part) -> dict[int, tuple[int, int]]:
    """{track id: (pid, tid)} of the tracks on a known thread of a known process."""
    track, proc, thread = (src.table(part, t) for t in ("track", "info_process", "info_thread"))
    if track is None or proc is None or thread is None:
        return {}
    return {t: (p, h) for t, p, h in src.conn.execute(
        f"SELECT T.id, P.pid, TH.tid FROM {track} T JOIN {proc} P ON P.id = T.pid"
        f" JOIN {thread} TH ON TH.id = T.tid")}


def category_ids(src, part) -> list[int]:
    """The string ids of the call-stack sample categories in one part (none: no samples)."""
    string = src.table(part, "string")
    if string is None:
        return []
    return [r[0] for r in src.conn.execute(
        f"SELECT id FROM {string} WHERE string IN ({','.join('?' * len(_CATEGORIES))})",
        _CATEGORIES)]


def has_samples(db) -> bool:
    """Whether any part of a local connection names a call-stack sample category (a cheap look
    at the string tables: the stack scan and the ranges are skipped where none was taken)."""
    return any(category_ids(src, part) for src in db.sources() for part, _ in src.tables("sample"))


def sample_ranges(src, part, table, abs_window):
    """(stack ids, times, track ids) of the call-stack samples of one part, a range at a time."""
    event = src.table(part, "event")
    cats = category_ids(src, part)
    if event is None or not cats:
        return
    lo, hi = rowid_span(src.conn, table)
    if lo is None:
        return
    where, extra = f"E.category_id IN ({','.join(map(str, cats))})", []
    if abs_window is not None:
        where += " AND SA.timestamp >= ? AND SA.timestamp < ?"
        extra = list(abs_window)
    sql = ("SELECT count(*), group_concat(E.stack_id), group_concat(SA.timestamp),"
           f" group_concat(SA.track_id) FROM {table} SA JOIN {event} E ON E.id = SA.event_id"
           f" WHERE SA.id >= ? AND SA.id < ? AND {where}")
    for a, b in rowid_ranges(lo, hi, _RANGE):
        n, stacks, times, tracks = src.conn.execute(sql, [a, b, *extra]).fetchone()
        if n:
            yield _parse(stacks, n), _parse(times, n), _parse(tracks, n)


def thread_samples(src, part, table, abs_window, keep: dict):
    """(stack ids, times, index of each sample's track in ``sorted(keep)``) of one part's
    call-stack samples on the tracks of ``keep`` (thread_tracks, or some of them), a range at
    a time: the samples view keeps only those on a known thread."""
    tracks = np.fromiter(sorted(keep), dtype=np.int64)
    if not len(tracks):
        return
    for stacks, times, trk in sample_ranges(src, part, table, abs_window):
        at = np.minimum(np.searchsorted(tracks, trk), len(tracks) - 1)
        mine = tracks[at] == trk
        yield stacks[mine], times[mine], at[mine]


def _add(acc: dict, key, count: int, first: int) -> None:
    """Counts and first times summed into ``acc`` (key -> [samples, first time])."""
    old = acc.get(key)
    acc[key] = [count, first] if old is None else [old[0] + count, min(old[1], first)]


def file_stack_counts(src, by_thread: bool, abs_window=None, tid=None, pid=None) -> list[tuple]:
    """[(guid, pid, tid, stack id, samples, first time)] of one file, as
    ``samples.stack_counts`` counts them (pid and tid None unless ``by_thread``), a row per
    stack (and thread); _Unreadable where the ranges cannot read the file."""
    rows = []
    for part, table in src.tables("sample"):
        threads = thread_tracks(src, part)
        keep = {t: v for t, v in threads.items()
                if (tid is None or v[1] == tid) and (pid is None or v[0] == pid)}
        known = sorted(keep)
        acc: dict[tuple, list] = {}
        for stacks, times, at in thread_samples(src, part, table, abs_window, keep):
            if not len(stacks):
                continue
            keys = (np.stack([at, stacks]) if by_thread else stacks[None, :])
            order = np.lexsort(keys[::-1])
            k, t = keys[:, order], times[order]
            first = np.flatnonzero(np.r_[True, (k[:, 1:] != k[:, :-1]).any(axis=0)])
            counts = np.diff(np.r_[first, k.shape[1]])
            mins = np.minimum.reduceat(t, first)
            for j, c, m in zip(first.tolist(), counts.tolist(), mins.tolist(), strict=True):
                _add(acc, tuple(k[:, j].tolist()), c, m)
        for key, (c, m) in acc.items():
            if by_thread:
                p, h = keep[known[key[0]]]
                rows.append((part.guid, p, h, key[1], c, m))
            else:
                rows.append((part.guid, None, None, key[0], c, m))
    return rows


def stack_counts(db, by_thread: bool, abs_window=None, tid=None, pid=None) -> list[tuple] | None:
    """``samples.stack_counts``' rows over every file of ``db`` (a rocpd Connection), in order of
    each stack's first sample; None where a file cannot be read by ranges (the SQL path)."""
    if type(db) is not Connection:  # a bare sqlite3 connection, a Dask one: the SQL path
        return None
    rows = []
    try:
        for src in db.sources():
            rows += file_stack_counts(src, by_thread, abs_window, tid, pid)
    except (_Unreadable, sqlite3.Error):
        return None
    if by_thread:  # SQLite's GROUP BY guid, pid, tid, stack_id: one row per thread's stack
        merged: dict[tuple, list] = {}
        for g, p, h, s, c, m in rows:
            _add(merged, (g, p, h, s), c, m)
        rows = [(*k, c, m) for k, (c, m) in merged.items()]
    rows.sort(key=lambda r: r[5])
    return [r[:5] for r in rows]
