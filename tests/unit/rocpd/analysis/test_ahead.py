"""The read-ahead of the streamed analysis's chunks: the same items in order, the reader's
exception raised where it would have been, and a caller stopping early stops the reader and runs
the generator's own cleanup; a query's chunks read ahead are those read in place. (That the
swept analysis is the held one, read ahead, is tests/unit/rocpd/analysis/test_streamed.py.)"""

from __future__ import annotations

import sqlite3
import threading

import pytest

from rocpd.analysis.ahead import ahead


def test_same_items_in_order():
    assert list(ahead(iter(range(1000)))) == list(range(1000))
    assert list(ahead(iter([]))) == []


def test_the_readers_exception_is_raised_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("bad row")

    got = []
    with pytest.raises(ValueError, match="bad row"):
        for x in ahead(items()):
            got.append(x)
    assert got == [1, 2]


def test_stopping_early_stops_the_reader_and_cleans_up():
    made, cleaned = [], threading.Event()

    def items():
        try:
            for i in range(10**6):
                made.append(i)
                yield i
        finally:
            cleaned.set()

    it = ahead(items(), depth=2)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()
    assert cleaned.is_set()
    assert len(made) <= 3 + 2 + 1  # the items taken, those queued, the one being made
    assert not [t for t in threading.enumerate() if t.name == "rocpd-read-ahead"]


def test_chunks_of_a_connection_of_the_readers_own(tmp_path):
    db = str(tmp_path / "t.db")
    with sqlite3.connect(db) as w:
        w.execute("CREATE TABLE t (x INTEGER)")
        w.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10_000)])
    conn, mine = sqlite3.connect(db, check_same_thread=False), sqlite3.connect(db)

    def chunks():
        last = -1
        while True:
            row = conn.execute("SELECT count(*), max(x), group_concat(x) FROM (SELECT x FROM t"
                               " WHERE x > ? ORDER BY x LIMIT 777)", (last,)).fetchone()
            if not row[0]:
                return
            last = row[1]
            yield row[2]

    got = []
    for text in ahead(chunks()):
        got.append(text)
        mine.execute("SELECT count(*) FROM t").fetchone()  # the caller's own statement meanwhile
    assert got == list(chunks())
