"""ROCTx annotations for Python: ranges, marks and thread names recorded by rocprof.

    import roctx
    with roctx.range("forward"):
        ...
    @roctx.range("step")
    def step(): ...

Every call is a cheap no-op when no profiler runs. The hot functions live in C
(rocprof._core); ROCm's camelCase names are kept as aliases (roctx.rangePush, ...).
"""

from __future__ import annotations

import functools as _functools

from rocprof import _core

range = _core.range  # noqa: A001 - ROCTx's own name; shadows builtins.range inside this module only
push = _core.push
pop = _core.pop
mark = _core.mark
start = _core.start
stop = _core.stop
pause = _core.pause
resume = _core.resume
name_thread = _core.name_thread
get_thread_id = _core.get_thread_id
Range = _core.Range


def _decorate(rng, func):
    """Wrap `func` so each call runs inside `rng` (the C Range calls this for decorator use)."""

    @_functools.wraps(func)
    def wrapper(*args, **kwargs):
        with rng:
            return func(*args, **kwargs)

    return wrapper


_core._set_decorator(_decorate)

# ROCm's names (roctx.h), for code ported from C/C++ or rocprofv3's Python bindings.
rangePush = push
rangePop = pop
rangeStart = start
rangeStop = stop
profilerPause = pause
profilerResume = resume
nameOsThread = name_thread
getThreadId = get_thread_id

__all__ = [
    "range", "push", "pop", "mark", "start", "stop", "pause", "resume", "name_thread",
    "get_thread_id", "Range", "rangePush", "rangePop", "rangeStart", "rangeStop",
    "profilerPause", "profilerResume", "nameOsThread", "getThreadId",
]
