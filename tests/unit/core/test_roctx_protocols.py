"""roctx.range as a context manager reached every usual way (ExitStack, AsyncExitStack, the
type's own __enter__/__exit__, async with, decorators on every kind of function), re-entrant,
copied and pickled; with a session (recorded) and without (a no-op)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import pickle
import sqlite3
import threading

import pytest
import rocprof
import roctx


@pytest.fixture
def session(tmp_path):
    s = rocprof.profile(output_dir=str(tmp_path), output_file="t")
    s.start()
    yield s
    s.stop()


def rows(s):
    """(message, API function, start, end) of every range, in start order."""
    s.stop()
    con = sqlite3.connect(f"file:{s.path}?mode=ro", uri=True)
    return con.execute(
        "SELECT json_extract(E.extdata, '$.message'), S.string, R.start, R.end FROM rocpd_region R"
        " JOIN rocpd_string S ON S.id = R.name_id JOIN rocpd_event E ON E.id = R.event_id"
        " ORDER BY R.start, R.id").fetchall()


def names(s):
    return [r[0] for r in rows(s)]


@pytest.fixture(params=["session", "no session"])
def maybe_session(request, tmp_path):
    """Runs a test's protocol with and without a session: both must work the same way."""
    if request.param == "no session":
        yield None
        return
    s = rocprof.profile(output_dir=str(tmp_path), output_file="t")
    s.start()
    yield s
    s.stop()


def test_exit_stack_enter_context(maybe_session):
    r = roctx.range("stacked")
    with contextlib.ExitStack() as stack:
        assert stack.enter_context(r) is r
        assert stack.enter_context(roctx.range("inner")).name == "inner"
    if maybe_session is not None:
        got = rows(maybe_session)
        assert [g[0] for g in got] == ["stacked", "inner"]
        (_, _, a0, a1), (_, _, b0, b1) = got
        assert a0 <= b0 <= b1 <= a1, "ExitStack unwinds in reverse: inner inside outer"


def test_exit_stack_unwinds_on_exception_and_keeps_it(maybe_session):
    with pytest.raises(ValueError, match="boom"):
        with contextlib.ExitStack() as stack:
            stack.enter_context(roctx.range("failing"))
            raise ValueError("boom")
    if maybe_session is not None:
        assert names(maybe_session) == ["failing"]


def test_type_level_enter_exit_as_generic_code_calls_them(maybe_session):
    r = roctx.range("typed")
    cls = type(r)
    assert cls.__enter__(r) is r
    assert cls.__exit__(r, None, None, None) is None  # falsy: never swallows an exception
    assert r.__enter__() is r and r.__exit__(None, None, None) is None
    with pytest.raises(TypeError, match="roctx.range"):
        cls.__enter__("not a range")
    if maybe_session is not None:
        assert names(maybe_session) == ["typed", "typed"]


def test_contextlib_abc_sees_a_context_manager():
    assert isinstance(roctx.range("x"), contextlib.AbstractContextManager)
    assert isinstance(roctx.range("x"), contextlib.AbstractAsyncContextManager)


def test_async_exit_stack_both_ways(maybe_session):
    async def main():
        async with contextlib.AsyncExitStack() as stack:
            assert stack.enter_context(roctx.range("sync-in-async")).name == "sync-in-async"
            r = await stack.enter_async_context(roctx.range("async-entered"))
            assert r.name == "async-entered"

    asyncio.run(main())
    if maybe_session is not None:
        got = {g[0]: g[1] for g in rows(maybe_session)}
        assert got == {"sync-in-async": "roctxRangePushA", "async-entered": "roctxRangeStartA"}


def test_async_with_in_interleaved_tasks_ends_each_range_in_its_own_task(session):
    # Task a opens its range and sleeps; task b opens its own and sleeps longer. A per-thread
    # push/pop stack would end b's range when a leaves (a's name on b's range).
    async def task(name, delay, started=None):
        async with roctx.range(name):
            if started is not None:
                started.set()
            await asyncio.sleep(delay)

    async def main():
        a_in = asyncio.Event()
        a = asyncio.create_task(task("task-a", 0.02, a_in))
        await asyncio.wait([a, asyncio.create_task(a_in.wait())], timeout=10,
                           return_when=asyncio.FIRST_COMPLETED)
        if a.done():
            a.result()  # a task that could not enter its range says why
        b = asyncio.create_task(task("task-b", 0.2))
        await asyncio.gather(a, b)

    asyncio.run(main())
    got = {g[0]: g for g in rows(session)}
    assert set(got) == {"task-a", "task-b"}
    (_, fa, a0, a1), (_, fb, b0, b1) = got["task-a"], got["task-b"]
    assert fa == fb == "roctxRangeStartA"
    assert a0 < b0 < a1 < b1, "the ranges overlap as the tasks did, each ending in its own task"


def test_nested_async_with_of_one_range_ends_in_order(session):
    r = roctx.range("nested-async")

    async def main():
        async with r:
            async with r:
                await asyncio.sleep(0)

    asyncio.run(main())
    (_, _, a0, a1), (_, _, b0, b1) = rows(session)
    assert a0 <= b0 <= b1 <= a1


def test_decorated_coroutine_function_is_one_range_per_call(maybe_session):
    @roctx.range("coro")
    async def fetch(x):
        await asyncio.sleep(0)
        return x + 1

    @roctx.range
    async def bare():
        return "bare"

    assert asyncio.iscoroutinefunction(fetch) and fetch.__name__ == "fetch"

    async def main():
        return await fetch(1), await fetch(2), await bare()

    assert asyncio.run(main()) == (2, 3, "bare")
    if maybe_session is not None:
        got = [(g[0], g[1]) for g in rows(maybe_session)]
        assert got[:2] == [("coro", "roctxRangeStartA")] * 2
        assert got[2][0].endswith("bare")


def test_decorated_generator_records_each_step_not_the_consumer(maybe_session):
    finished = []

    @roctx.range("produce")
    def produce(n):
        try:
            for i in range(n):
                got = yield i
                if got is not None:
                    finished.append(got)
        finally:
            finished.append("closed")
        return "done"

    def consume():
        return (yield from produce(3))

    out = []
    gen = consume()
    out.append(next(gen))
    with roctx.range("consumer"):
        out.append(gen.send("sent"))
    out.append(next(gen))
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert out == [0, 1, 2] and stop.value.value == "done"
    assert finished == ["sent", "closed"]
    if maybe_session is not None:
        got = rows(maybe_session)
        assert [g[0] for g in got] == ["produce", "consumer", "produce", "produce", "produce"]
        (_, _, c0, c1), (_, _, p0, p1) = got[1], got[2]
        assert c0 <= p0 <= p1 <= c1, "the step run by the consumer's send nests in its range"


def test_decorated_generator_throw_and_close_reach_the_generator():
    seen = []

    @roctx.range("gen")
    def gen():
        try:
            yield 1
        except KeyError:
            seen.append("caught")
            yield 2
        finally:
            seen.append("finally")

    g = gen()
    assert next(g) == 1
    assert g.throw(KeyError("k")) == 2
    g.close()
    assert seen == ["caught", "finally"]


def test_decorated_async_generator_records_each_step(maybe_session):
    @roctx.range("agen")
    async def numbers(n):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    async def main():
        return [x async for x in numbers(2)]

    assert asyncio.run(main()) == [0, 1]
    if maybe_session is not None:
        assert [(g[0], g[1]) for g in rows(maybe_session)] == [("agen", "roctxRangeStartA")] * 3


def test_one_range_object_reentrant_across_threads(session):
    r = roctx.range("shared")
    barrier = threading.Barrier(2)

    def work():
        with r:
            barrier.wait()
            with r:
                pass

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert names(session) == ["shared"] * 4


def test_copy_and_pickle_give_a_range_of_the_same_name():
    # Ranges are cached per name (while the cache has room): then a copy is the range itself.
    r = roctx.range("picklable")
    for twin in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r)),
                 roctx.Range("picklable")):
        assert isinstance(twin, roctx.Range) and twin.name == "picklable"
    with pytest.raises(TypeError, match="one message string"):
        roctx.Range()


def test_equal_names_share_a_range_and_subclassed_strings_keep_their_name(session):
    class Name(str):
        pass

    a = "".join(["sa", "me"])  # a str equal to "same" that is another object
    assert a is not "same" and roctx.range(a).name == "same"  # noqa: F632
    with roctx.range(Name("sub")) as r:
        assert r.name == "sub"
    assert names(session) == ["sub"]
