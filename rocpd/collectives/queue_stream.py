"""Queue length per stream for the report, in one pass over each stream's kernels in order of
joining the queue (rocpd.collectives.queue_read: where kernels join when they start, in the
order stored, else through the index on start; else one sort of the kernels). Leaves come later
than their kernel's join, so the events before the latest join read are final: they are swept
(queue_sweep._Level: the level, the summary's sums) while the later leaves wait, as many as
kernels queued at once.

The chart's series is every n-th instant with n from the stream's number of instants, known
only at its end: the instants go to a spill (held up to a size, then a temporary file) and are
thinned from it afterwards. The same table and series as queue_sweep.event_sweeps, whose two
sorts of every event and count of distinct instants this replaces; that sweep stays for rows
out of order (a kernel whose end is before its start, a stream met in two files).
"""

from __future__ import annotations

import tempfile

import numpy as np

from . import queue_read
from .queue_sweep import _Level, event_sweeps, summary_row

_HOLD = 1 << 20  # instants held (all streams together) before they go to temporary files


class _Disorder(Exception):
    """A stream's kernels not in order of joining, or one leaving before it joined."""


def sweeps(db, max_points: int, batch: int | None = None):
    """As queue_sweep.event_sweeps: per stream in (guid, pid, stream) order, (pid, stream_id,
    summary row, thinned instants, their levels)."""
    stored: set = set()  # parts read in the order stored: checked by the sweep
    try:
        done = _swept(db, batch or queue_read.BATCH, stored)
    except _Disorder:
        done = None
    if done is None and stored:  # a stream's rows not in order as stored: through the index
        try:
            done = _swept(db, batch or queue_read.BATCH, None)
        except _Disorder:
            pass
    if done is None:
        yield from event_sweeps(db, max_points)
        return
    for (_g, pid, sid), st in sorted(done.items()):
        t, lv = st.spill.thinned(max(1, st.level.i // max_points))
        yield pid, sid, summary_row(pid, sid, st.level), t, lv
        st.spill.close()


def _swept(db, batch: int, stored: set | None) -> dict:
    streams: dict = {}
    try:
        for src in db.sources():
            for part in src.parts:
                for cols in queue_read.batches(src, part, batch, stored):
                    for key, t_in, t_out in _by_stream(*cols):
                        st = streams.get((part.guid, *key))
                        if st is None:
                            st = streams[(part.guid, *key)] = _Stream()
                        st.feed(t_in, t_out)
                    if sum(s.spill.n_held for s in streams.values()) >= _HOLD:
                        for s in streams.values():  # one budget for every stream's instants
                            s.spill.flush()
        for st in streams.values():
            st.finish()
    except BaseException:
        for st in streams.values():
            st.spill.close()
        raise
    return streams


def _by_stream(pid, sid, t_in, t_out):
    """((pid, stream), joins, leaves) of each stream in a batch, its rows in their order."""
    n = len(pid)
    if not n:
        return
    if (pid == pid[0]).all() and (sid == sid[0]).all():
        yield (int(pid[0]), int(sid[0])), t_in, t_out
        return
    order = np.lexsort((np.arange(n), sid, pid))
    pid, sid, t_in, t_out = pid[order], sid[order], t_in[order], t_out[order]
    cut = np.flatnonzero((pid[1:] != pid[:-1]) | (sid[1:] != sid[:-1])) + 1
    for lo, hi in zip([0, *cut.tolist()], [*cut.tolist(), n], strict=True):
        yield (int(pid[lo]), int(sid[lo])), t_in[lo:hi], t_out[lo:hi]


class _Instants:
    """Every instant of a stream (time, level) in order: held up to _HOLD, then appended to a
    temporary file; read back thinned to every ``step``-th."""

    def __init__(self):
        self.held: list = []
        self.n_held = 0
        self.file = None

    def append(self, t, lv) -> None:
        self.held.append(np.stack([t, lv], axis=1).astype(np.int64))
        self.n_held += len(t)
        if self.n_held >= _HOLD:
            self.flush()

    def flush(self) -> None:
        """The instants held so far to the temporary file."""
        if not self.n_held:
            return
        if self.file is None:
            self.file = tempfile.TemporaryFile(prefix="rocpd-queue-")
        for a in self.held:
            self.file.write(a.tobytes())
        self.held, self.n_held = [], 0

    def _chunks(self):
        if self.file is not None:
            self.file.flush()
            self.file.seek(0)
            while len(a := np.fromfile(self.file, dtype=np.int64, count=2 * _HOLD)):
                yield a.reshape(-1, 2)
        yield from self.held

    def thinned(self, step: int):
        out, i = [], 0
        for a in self._chunks():
            out.append(a[(-i) % step::step].copy())  # not a view holding the chunk
            i += len(a)
        both = np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)
        return both[:, 0].copy(), both[:, 1].copy()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.held = []


class _Stream:
    """One stream's sweep: joins arrive in order; the events before the latest join are swept,
    the later ones wait (joins at that very instant, leaves after it)."""

    def __init__(self):
        self.spill = _Instants()
        self.level = _Level(None, self.spill)
        self.queued = 0
        self.mark = None  # the latest join read: every later join is at or after it
        self.wait_in = np.zeros(0, dtype=np.int64)
        self.wait_out = np.zeros(0, dtype=np.int64)

    def feed(self, t_in, t_out) -> None:
        if not len(t_in):
            return
        if (self.mark is not None and t_in[0] < self.mark) or (t_in[1:] < t_in[:-1]).any() \
                or (t_out < t_in).any():
            raise _Disorder
        self.mark = int(t_in[-1])
        ins = np.concatenate([self.wait_in, t_in])
        outs = np.concatenate([self.wait_out, t_out])
        now_in, now_out = ins < self.mark, outs < self.mark
        self._sweep(ins[now_in], outs[now_out])
        self.wait_in, self.wait_out = ins[~now_in], outs[~now_out]

    def finish(self) -> None:
        self._sweep(self.wait_in, self.wait_out)
        self.wait_in = self.wait_out = np.zeros(0, dtype=np.int64)

    def _sweep(self, ins, outs) -> None:
        """Every event of the instants in ``ins`` and ``outs`` (none of them met again later)."""
        if not len(ins) and not len(outs):
            return
        t = np.concatenate([ins, outs])
        d = np.concatenate([np.ones(len(ins), np.int64), -np.ones(len(outs), np.int64)])
        order = np.lexsort((d, t))
        t, lv = t[order], self.queued + np.cumsum(d[order])
        self.queued = int(lv[-1])
        last = np.append(t[1:] != t[:-1], True)  # an instant's level after its last event
        self.level.instants(t[last], lv[last])
