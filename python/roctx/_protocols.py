"""A Range (rocprof._core.Range) as a decorator and under ``async with``.

``with`` stays in C (the hot path, rocprof._core). What is here runs once per decorated call
or per ``async with``:

- a plain function: each call is one range (``with rng: return func(...)``);
- a generator function: each step (from a resumption to the next ``yield``) is one range, so
  the time the consumer spends between items is not counted and ranges nest in order;
- a coroutine function: each call is one range, recorded as a start/stop range (below);
- an async generator function: each step is one start/stop range.

``async with roctx.range(msg)`` records a start/stop range (roctxRangeStartA), not a push/pop
one: other tasks run on the same thread while this one awaits, so a per-thread push/pop stack
would end their ranges in each other's place. The open range ids of a task are kept in a
context variable (each task has its own), so nested ``async with`` blocks end in order.
"""

from __future__ import annotations

import functools

from rocprof import _core

# Code flags (inspect.CO_*), read from the function instead of importing inspect at start-up.
_CO_GENERATOR, _CO_COROUTINE, _CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200

_open_ranges = None  # contextvars.ContextVar of the open async range ids, made on first use


def _open():
    global _open_ranges
    if _open_ranges is None:
        import contextvars

        _open_ranges = contextvars.ContextVar("roctx_async_ranges", default=())
    return _open_ranges


async def aenter(rng):
    """Range.__aenter__: start a start/stop range named like the Range."""
    var = _open()
    var.set(var.get() + (_core.start(rng.name),))
    return rng


async def aexit(rng, exc_type, exc, tb):
    """Range.__aexit__: stop this task's innermost open async range; never swallows."""
    var = _open()
    ids = var.get()
    if ids:
        var.set(ids[:-1])
        _core.stop(ids[-1])
    return False


def _kind(func) -> int:
    """The code flags of what `func` runs (partials and bound methods unwrapped)."""
    while isinstance(func, functools.partial):
        func = func.func
    func = getattr(func, "__func__", func)
    code = getattr(func, "__code__", None)
    flags = code.co_flags if code is not None else 0
    if getattr(func, "_is_coroutine_marker", None) is not None:  # inspect.markcoroutinefunction
        flags |= _CO_COROUTINE
    return flags


def decorate(rng, func):
    """Wrap `func` so its calls (or its generator's steps) are recorded as `rng`."""
    flags = _kind(func)
    if flags & _CO_ASYNC_GENERATOR:
        return _async_steps(rng, func)
    if flags & _CO_COROUTINE:

        @functools.wraps(func)
        async def coroutine(*args, **kwargs):
            async with rng:
                return await func(*args, **kwargs)

        return coroutine
    if flags & _CO_GENERATOR:
        return _steps(rng, func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with rng:
            return func(*args, **kwargs)

    return wrapper


def _steps(rng, func):
    @functools.wraps(func)
    def generator(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with rng:
                value = next(gen)
        except StopIteration as stop:
            return stop.value
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                gen.close()
                raise
            except BaseException as exc:  # thrown in by the consumer: into the generator
                try:
                    with rng:
                        value = gen.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    with rng:
                        value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value

    return generator


def _async_steps(rng, func):
    @functools.wraps(func)
    async def generator(*args, **kwargs):
        agen = func(*args, **kwargs)
        try:
            async with rng:
                value = await agen.__anext__()
        except StopAsyncIteration:
            return
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                await agen.aclose()
                raise
            except BaseException as exc:
                try:
                    async with rng:
                        value = await agen.athrow(exc)
                except StopAsyncIteration:
                    return
            else:
                try:
                    async with rng:
                        value = await agen.asend(sent)
                except StopAsyncIteration:
                    return

    return generator
