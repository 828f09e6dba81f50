"""Queue length per stream made a stream at a time from integer arrays (rocpd.collectives.queue)
against the frame of tuples it replaced (the reference below, as the module computed it), and
the report's section, swept in time order in bounded memory (rocpd.collectives.queue_sweep),
against the table and chart made from that frame. Databases written by the real writer: two files, streams
with and without launch calls, launches after their kernel started, equal instants."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

import rocpd
from rocpd.collectives import queue as qmod
from rocpd.collectives import queue_read, queue_stream, queue_sweep
from rocpd.collectives import report as qreport
from rocpd.testing import DatabaseBuilder

_OLD_SQL = ("SELECT K.guid, K.pid, K.stream_id, K.start, K.\"end\", K.corr_id, R.start"
            " FROM kernels K LEFT JOIN (SELECT guid, corr_id, MIN(start) AS start FROM regions"
            " WHERE corr_id != 0 AND (category LIKE 'CUDA_%' OR category LIKE 'HIP_%')"
            " GROUP BY guid, corr_id) R ON R.guid = K.guid AND R.corr_id = K.corr_id")


def _reference(db):
    rows = [tuple(r) for src in db.sources() for r in src.conn.execute(_OLD_SQL)]
    cols = ["guid", "pid", "stream_id", "timestamp", "queue_length"]
    k = pd.DataFrame(rows, columns=["guid", "pid", "stream_id", "start", "end", "corr", "launch"])
    k["enter"] = k["launch"].where(k["launch"].notna() & (k["launch"] <= k["start"]), k["start"])
    out = []
    for (g, pid, sid), grp in k.groupby(["guid", "pid", "stream_id"], sort=True):
        t = np.concatenate([grp["enter"].to_numpy("int64"), grp["end"].to_numpy("int64")])
        d = np.concatenate([np.ones(len(grp), "int64"), -np.ones(len(grp), "int64")])
        order = np.lexsort((d, t))
        t, level = t[order], np.cumsum(d[order])
        last = np.append(t[1:] != t[:-1], True)
        out.append(pd.DataFrame({"guid": g, "pid": pid, "stream_id": sid, "timestamp": t[last],
                                 "queue_length": level[last]}))
    return pd.concat(out, ignore_index=True)[cols]


def _write(path, pid, seed, launches=True, bad=False, stored_in_order=False):
    rng = random.Random(seed)
    last = {}
    with DatabaseBuilder(path, pid=pid) as b:
        t = 1_000_000
        for i in range(3000):
            stream = rng.choice([0, 1, 2] if launches else [2, 3])
            start = t + rng.randrange(0, 40_000)
            if stored_in_order:  # each stream's kernels stored in order of start (ties too)
                start = last[stream] = max(start, last.get(stream, 0))
            end = start + rng.choice([1_000, 5_000, 20_000])  # equal instants happen
            if stream != 2 and launches:
                corr = b.next_correlation()
                at = start - rng.randrange(-3_000, 30_000)  # some launches after the start
                b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", at, at + 2_000,
                         correlation_id=corr)
                b.kernel(f"k{i % 5}", start, end, correlation_id=corr, stream=stream)
            else:
                b.kernel("solo", start, end, stream=stream)
            t += rng.randrange(0, 10_000)
        if bad:  # a kernel that ends before it starts
            b.kernel("odd", t + 50_000, t + 40_000, stream=3)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("queue")
    # c.db: no launch calls, its kernels read by the index on start (streams interleaved)
    return [_write(d / "a.db", 11, 1), _write(d / "b.db", 12, 2),
            _write(d / "c.db", 13, 3, launches=False)]


@pytest.fixture(scope="module")
def in_order(tmp_path_factory):
    """Two files whose streams' rows are stored in order of start (streams interleaved, equal
    starts), as a writer stores a GPU's kernels: read by rowid, not through the index."""
    d = tmp_path_factory.mktemp("queue_in_order")
    return [_write(d / "e.db", 15, 5, launches=False, stored_in_order=True),
            _write(d / "f.db", 16, 6, launches=False, stored_in_order=True)]


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("queue_bad") / "d.db", 14, 4, launches=False, bad=True)


class _Ctx:
    units, top, html = "us", 20, True

    def __init__(self, db):
        self.db = db


def test_queue_lengths_as_the_frame_of_tuples_gave_them(files):
    with rocpd.connect(*files) as db:
        new, old = qmod.queue_lengths(db), _reference(db)
    assert len(new) > 9000 and new["stream_id"].nunique() == 4
    pd.testing.assert_frame_equal(new, old)


def _section(monkeypatch, paths):
    monkeypatch.setattr(qreport, "MAX_POINTS", 500)  # thinned, as long runs are
    monkeypatch.setattr(qreport.charts, "available", lambda: True)
    made = []
    monkeypatch.setattr(qreport.charts, "div", lambda fig: made.append(fig.to_json()) or "<div/>")
    with rocpd.connect(*paths) as db:
        sec = qreport.queue_section(_Ctx(db))
        q = _reference(db)
    expected = qmod.queue_summary(q)
    assert sec.html == "<div/>" + qreport.table_html(expected, "us", 20)
    assert made == [qreport._figure(q).to_json()]
    return sec


@pytest.mark.parametrize("batch", [1, 7, 1 << 16])
def test_report_section_as_from_the_whole_frame(files, monkeypatch, batch):
    # batch: kernels read at a time (a stream's kernels at one instant split between two
    # batches; every kernel its own); _HOLD: the instants (of all streams) spilled to files
    # every few hundred
    monkeypatch.setattr(queue_read, "BATCH", batch)
    monkeypatch.setattr(queue_stream, "_HOLD", 300)
    swept = []
    monkeypatch.setattr(queue_stream, "event_sweeps", lambda *a: swept.append(a) or [])
    sec = _section(monkeypatch, files)
    assert not swept  # made by the one pass, not the event sweep
    assert sec.figures["queue_length"]() is not None  # the PNG's figure, from the same series


@pytest.mark.parametrize("batch", [1, 7, 1 << 16])
def test_event_sweep_as_from_the_whole_frame(files, monkeypatch, batch):
    # batch: the sweep's events turned into arrays this many at a time (an instant's events
    # split between two batches; every event its own)
    monkeypatch.setattr(queue_sweep, "_BATCH", batch)
    monkeypatch.setattr(queue_stream, "sweeps", queue_sweep.event_sweeps)
    monkeypatch.setattr(qreport, "sweeps", queue_sweep.event_sweeps)
    _section(monkeypatch, files)


def test_rows_out_of_order_go_to_the_event_sweep(files, bad, monkeypatch):
    swept = []
    real = queue_stream.event_sweeps
    monkeypatch.setattr(queue_stream, "event_sweeps", lambda *a: swept.append(a) or real(*a))
    _section(monkeypatch, [*files, bad])
    assert swept


@pytest.mark.parametrize("batch", [1, 7, 1 << 16])
def test_rows_stored_in_order_are_read_by_rowid(in_order, files, monkeypatch, batch):
    """Streams stored in order are read in that order, without the index; a file whose rows
    are not (c.db: starts jitter past later rows') is read again through the index, not by the
    event sweep; the same table and chart either way."""
    monkeypatch.setattr(queue_read, "BATCH", batch)
    by_index, swept = [], []
    real = queue_read._by_start
    monkeypatch.setattr(queue_read, "_by_start", lambda *a: by_index.append(a) or real(*a))
    monkeypatch.setattr(queue_stream, "event_sweeps", lambda *a: swept.append(a) or [])
    _section(monkeypatch, in_order)
    assert not by_index and not swept
    _section(monkeypatch, [*in_order, files[2]])
    assert by_index and not swept
