"""GPU busy read a rowid range at a time and summed in numpy, against SQLite's GROUP BY over the
same union (the query it replaces): the same rows, in the same order, on real databases — one
part and two parts in a file, ranges of 1, 7 and all rows, with pid and time filters — and a
file the ranges cannot read (a NULL end) answered by the GROUP BY."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

import rocpd
from rocpd.io.filters import Filter, resolve
from rocpd.io.merge import merge_files
from rocpd.summary import busy


@pytest.fixture(scope="module")
def files(tmp_path_factory, make_run):
    d = tmp_path_factory.mktemp("busy")
    make_run(d / "a.db", seed=3, pid=11, n_kernels=300)
    make_run(d / "b.db", seed=4, pid=12, n_kernels=120)
    merge_files([str(d / "a.db"), str(d / "b.db")], str(d / "ab.db"))
    return d


def _both(path, **filters):
    with rocpd.connect(str(path)) as db:
        where, params = resolve(db, Filter.of(filters))
        (src,) = db.sources()
        grouped = src.conn.execute(busy._GROUPED.format(where=where), params).fetchall()
        ranged = [(g, ag, *v) for (g, ag), v in busy._ranged(src, where, params).items()]
        ranged.sort(key=lambda r: (r[0], r[1] is not None, r[1] or 0))
        return grouped, ranged, db.busy(**filters)


@pytest.mark.parametrize("rows", [1, 7, 1 << 21])
@pytest.mark.parametrize("name", ["a.db", "ab.db"])
@pytest.mark.parametrize("filters", [{}, {"pid": 12}, {"pct": (20.0, 70.0)},
                                     {"start": "20%", "end": "70%"}])
def test_ranges_sum_as_the_group_by(files, monkeypatch, rows, name, filters):
    if name == "a.db" and filters.get("pid") == 12:
        filters = {"pid": 11}
    monkeypatch.setattr(busy, "_RANGE", rows)
    grouped, ranged, df = _both(files / name, **filters)
    assert grouped and ranged == [tuple(r) for r in grouped]
    assert df["GpuTime"].tolist() == [r[2] for r in grouped]


def test_a_window_with_an_end_keeps_what_ends_inside(files):
    """ROCm's --start/--end window names the records' end: inside it is less GPU time than the
    whole run's, and more than none."""
    whole = _both(files / "a.db")[2]["GpuTime"].sum()
    _grouped, _ranged, df = _both(files / "a.db", start="20%", end="70%")
    assert 0 < df["GpuTime"].sum() < whole


def _altered(files, path, kind: str, change: str):
    """A copy of a.db at ``path`` with ``change`` (SET ... WHERE ..., {t}: the table) applied
    to its one ``kind`` table."""
    shutil.copy(files / "a.db", path)
    con = sqlite3.connect(path)
    (table,) = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                          f" AND name LIKE 'rocpd_{kind}_%'")]
    with con:
        con.execute(f"UPDATE {table} " + change.format(t=table))
    con.close()
    return path


def _grouped_not_ranged(db):
    """The ranges refuse the file; GPU busy answers as SQLite's GROUP BY does."""
    (src,) = db.sources()
    with pytest.raises(busy._Unreadable):
        busy._ranged(src, "1", [])
    grouped = src.conn.execute(busy._GROUPED.format(where="1")).fetchall()
    assert grouped and db.busy()["GpuTime"].tolist() == [r[2] for r in grouped]


def test_a_file_the_ranges_cannot_read_gets_the_group_by(files, tmp_path):
    path = _altered(files, tmp_path / "nulls.db", "memory_copy",
                    "SET start = 'x' WHERE id = (SELECT min(id) FROM {t})")
    with rocpd.connect(str(path)) as db:
        _grouped_not_ranged(db)


def test_ids_far_sparser_than_rows_get_the_group_by_not_a_query_per_empty_range(files, tmp_path):
    """A kernel row with id 2^50 (explicit ids from another writer): GPU busy and the kernel
    summary read the file through SQLite's GROUP BY instead of walking 2^31 empty ranges."""
    from rocpd.summary import fastagg

    path = _altered(files, tmp_path / "sparse.db", "kernel_dispatch",
                    f"SET id = {1 << 50} WHERE id = (SELECT max(id) FROM {{t}})")
    with rocpd.connect(str(path)) as db:
        _grouped_not_ranged(db)
        assert fastagg.kernel_partials(db, "1", []) is None  # the SQL summary answers
        with rocpd.connect(str(files / "a.db")) as dense:
            assert db.kernel_stats()["Calls"].sum() == dense.kernel_stats()["Calls"].sum()
