"""Call-stack samples counted per stack by SQLite (rocpd.summary.samples.stack_counts): the
counts a row per sample gives, under every filter, so that `rocpd samples`, its collapsed and
flame-graph outputs and the summary's table hold a row per stack, not per sample."""

from __future__ import annotations

from collections import Counter

import pytest

import rocpd
from rocpd.summary import samples
from rocpd.testing import DatabaseBuilder

STACKS = [["main", "train", f"layer{i}"] for i in range(7)] + [["main", "load"]]


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("s") / "s.db")
    with DatabaseBuilder(path) as b:
        b.thread(1001, "loader")
        b.marker("forward", 10_000, 60_000)
        for i in range(3_000):
            b.sample(None, 1_000 + i * 37, call_stack=STACKS[(i * 5) % len(STACKS)],
                     tid=1000 if i % 4 else 1001)
    return path


@pytest.mark.parametrize("filters", [{}, {"tid": 1001}, {"window": (5_000, 50_000)},
                                     {"roctx_range": "forward"}, {"pid": 1000}])
def test_counts_per_stack_are_those_of_the_rows(db_path, filters):
    with rocpd.connect(db_path) as db:
        rows = samples.sample_rows(db, **filters)
        per_stack = Counter((g, sid) for g, _p, _t, _ts, sid in rows)
        per_thread = Counter((g, p, t, sid) for g, p, t, _ts, sid in rows)
        counted = samples.stack_counts(db, **filters)
        assert {(g, sid): n for g, _p, _t, sid, n in counted} == per_stack
        assert len(counted) == len(per_stack)  # one row per stack
        assert {(g, p, t, sid): n for g, p, t, sid, n in
                samples.stack_counts(db, by_thread=True, **filters)} == per_thread
        assert samples.sample_count(db, **filters) == len(rows) > 0
        # first stack first, as a pass over the rows in time order meets them
        assert [sid for *_, sid, _n in counted] == list(dict.fromkeys(r[4] for r in rows))


def test_top_functions_count_each_sample_once(db_path):
    with rocpd.connect(db_path) as db:
        top = {r["function"]: r for r in samples.top_functions(db, limit=None)}
        n = samples.sample_count(db)
    assert top["main"]["total"] == n and top["main"]["total_pct"] == 100.0
    assert top["load"]["self"] == top["load"]["total"] == n // len(STACKS)
    assert sum(r["self"] for r in top.values()) == n
