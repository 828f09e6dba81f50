"""The Python roctx API inside a real in-process session."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
import rocprof
import roctx
from support import MESSAGE


@pytest.fixture
def session(tmp_path):
    s = rocprof.profile(output_dir=str(tmp_path), output_file="t")
    s.start()
    yield s
    s.stop()


def read(s, sql=f"SELECT {MESSAGE}, start, end, tid FROM regions ORDER BY start"):
    s.stop()
    return sqlite3.connect(f"file:{s.path}?mode=ro", uri=True).execute(sql).fetchall()


def test_no_session_calls_are_no_ops():
    assert not rocprof._core.active() if hasattr(rocprof, "_core") else True
    with roctx.range("nothing"):
        pass
    assert roctx.push("x") == -1 and roctx.pop() == -1
    assert roctx.start("x") == 0
    roctx.stop(0)
    roctx.mark("x")


def test_push_pop_depths_and_nesting(session):
    assert roctx.push("a") == 0
    assert roctx.push("b") == 1
    assert roctx.pop() == 1
    assert roctx.pop() == 0
    assert roctx.pop() == -1, "popping an empty stack is reported, not recorded"
    rows = read(session)
    assert [r[0] for r in rows] == ["a", "b"]
    (a, a0, a1, _), (b, b0, b1, _) = rows
    assert a0 <= b0 <= b1 <= a1


def test_range_context_manager_records_even_on_exception(session):
    with pytest.raises(KeyError):
        with roctx.range("failing"):
            raise KeyError("x")
    assert [r[0] for r in read(session)] == ["failing"]


def test_decorator_keeps_function_identity_and_result(session):
    @roctx.range("named")
    def f(x):
        """doc"""
        return x * 2

    @roctx.range
    def bare():
        return "ok"

    assert f.__name__ == "f" and f.__doc__ == "doc" and f(21) == 42
    assert bare() == "ok"
    names = [r[0] for r in read(session)]
    assert names.count("named") == 1 and any(n.endswith("bare") for n in names)


def test_range_objects_are_reusable_and_recursive(session):
    r = roctx.range("rec")
    assert roctx.range("rec") is r  # cached per name

    def down(n):
        with r:
            if n:
                down(n - 1)

    down(4)
    rows = read(session)
    assert [x[0] for x in rows] == ["rec"] * 5
    assert all(a[1] <= b[1] and b[2] <= a[2] for a, b in zip(rows, rows[1:], strict=False))


def test_start_stop_across_threads(session):
    rid = roctx.start("cross")
    t = threading.Thread(target=roctx.stop, args=(rid,))
    t.start()
    t.join()
    roctx.stop(rid)  # second stop of the same id records nothing
    rows = read(session)
    assert [r[0] for r in rows] == ["cross"]
    assert rows[0][3] == threading.get_native_id(), "the range belongs to the thread that started it"


def test_pause_resume_drops_what_is_between(session):
    with roctx.range("kept-1"):
        pass
    roctx.pause()
    with roctx.range("dropped"):
        pass
    roctx.mark("dropped-mark")
    roctx.resume()
    with roctx.range("kept-2"):
        pass
    assert [r[0] for r in read(session)] == ["kept-1", "kept-2"]


def test_name_thread_and_thread_id(session):
    got = {}

    def work():
        roctx.name_thread("named-worker")
        got["tid"] = roctx.get_thread_id()
        with roctx.range("in-worker"):
            pass

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert got["tid"] == t.native_id
    rows = read(session, f"SELECT name FROM threads WHERE tid = {got['tid']}")
    assert rows == [("named-worker",)]


def test_camelcase_aliases_are_the_same_functions():
    assert roctx.rangePush is roctx.push and roctx.rangePop is roctx.pop
    assert roctx.rangeStart is roctx.start and roctx.rangeStop is roctx.stop
    assert roctx.profilerPause is roctx.pause and roctx.profilerResume is roctx.resume
    assert roctx.nameOsThread is roctx.name_thread and roctx.getThreadId is roctx.get_thread_id


def test_wrong_argument_types_raise_clearly():
    with pytest.raises(TypeError, match="message string"):
        roctx.range(3)
    with pytest.raises(TypeError):
        roctx.mark(None)


def test_second_session_refused_while_one_runs(session, tmp_path):
    # The native core runs one session per process; rocprof.profile() nested in a running one
    # joins it as a range instead (issue 12, tests/integration/test_nested_profile.py).
    with pytest.raises(RuntimeError, match="already running"):
        rocprof._core.start_session(str(tmp_path / "b" / "x_results.db"))
    inner = rocprof.profile(output_dir=str(tmp_path / "b"), output_file="inner")
    assert inner.start() == session.path and inner.joined
    inner.stop()
    assert not (tmp_path / "b").exists()


def test_second_session_in_one_process_has_every_name(tmp_path):
    names = []
    for i in range(2):
        s = rocprof.profile(output_dir=str(tmp_path), output_file=f"s{i}")
        s.start()
        with roctx.range("same-name"):  # interned by the first session only
            pass
        s.stop()
        con = sqlite3.connect(f"file:{s.path}?mode=ro", uri=True)
        names.append(con.execute(f"SELECT {MESSAGE}, category FROM regions").fetchall())
    assert names[0] == names[1] == [("same-name", "MARKER_CORE_API")]


def test_ranges_past_the_cache_are_freed():
    import gc
    import sys

    for i in range(9000):  # fill the per-name cache (8192 names) first
        roctx.range(f"fill {i}")
    gc.collect()
    before = sys.getallocatedblocks()
    for i in range(20000):
        with roctx.range(f"uncached {i}"):
            pass
    gc.collect()
    assert sys.getallocatedblocks() - before < 2000, "each uncached range must be freed"


def test_a_literal_past_the_full_cache_is_made_once(session):
    for i in range(9000):  # the per-name cache (8192 names) is full: names by step did that
        roctx.range(f"fill {i}")
    literal = "a literal named after the cache filled"
    ranges = set()
    for _ in range(3):
        with roctx.range(literal) as r:
            ranges.add((id(r), id(r.__enter__)))
    assert len(ranges) == 1, "the same Range and bound __enter__ each time: nothing allocated per use"
    assert read(session, f"SELECT COUNT(*) FROM regions WHERE {MESSAGE} = '{literal}'") == [(3,)]


def test_nesting_deeper_than_the_stack_keeps_outer_ranges_right(session):
    depth = 300
    for i in range(depth):
        roctx.push(f"d{i}")
    for _ in range(depth):
        roctx.pop()
    roctx.mark("after")
    rows = {name: (start, end) for name, start, end, _ in read(session)}
    assert "d299" not in rows and "d255" in rows, "ranges past 256 are dropped (and counted)"
    assert rows["d0"][1] >= rows["d255"][1], "d0 ends at its own (last) pop"
    assert rows["d254"][1] <= rows["d253"][1] <= rows["d0"][1]
    con = sqlite3.connect(f"file:{session.path}?mode=ro", uri=True)
    dropped = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))
    assert dropped.get("rocprof.dropped_records.roctx_depth") == str(depth - 256)


def test_session_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="ring_capacity"):
        rocprof._core.start_session(str(tmp_path / "x_results.db"), ring_capacity=1 << 31)
    with pytest.raises(ValueError, match="flush_ms"):
        rocprof._core.start_session(str(tmp_path / "x_results.db"), flush_ms=0)
    assert not rocprof._core.active()


def test_range_times_are_boottime_between_the_clock_reads_around_them(session):
    # Ranges may be stamped with the CPU's counter and mapped to CLOCK_BOOTTIME by the writer
    # (where the kernel keeps time with it): they must agree with the clock every other record
    # uses. The slack covers a reading disturbed on a loaded machine; a wrong mapping is off
    # by milliseconds or more.
    slack = 2000
    clock, boot = time.clock_gettime_ns, time.CLOCK_BOOTTIME
    brackets = []
    for i in range(300):
        t0 = clock(boot)
        with roctx.range("bracketed"):
            pass
        brackets.append((t0, clock(boot)))
        if i % 100 == 0:
            time.sleep(0.05)  # across drains: later ranges map through later points
    rows = read(session)
    assert len(rows) == len(brackets)
    for (_, start, end, _), (t0, t1) in zip(rows, brackets, strict=True):
        assert t0 - slack <= start <= end <= t1 + slack, (t0, start, end, t1)
