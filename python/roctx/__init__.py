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

# Tells this package from ROCm's roctx of the same name (`rocprof info` reads it without importing).
_ROCPROF_PACKAGE = True

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

# Names given to HIP devices in this process (device id -> name), for tools and tests to read.
hip_device_names: dict[int, str] = {}


def name_hip_device(name: str, device_id: int = 0) -> int:
    """Name HIP device ``device_id`` ``name`` (ROCm's roctxNameHipDevice); returns 0.

    TODO(native): the name is only kept in :data:`hip_device_names` for now; storing it in the
    database needs the C function ``roctxNameHipDevice(const char* name, int device_id)`` in
    libroctx64 and a ``rocprof._core.name_hip_device(name, device_id)`` binding that records it
    as the agent's ``rocpd_info_agent.user_name``."""
    if not isinstance(name, str):
        raise TypeError("roctx.nameHipDevice() takes a name string and a device id")
    hip_device_names[int(device_id)] = name
    return 0


nameHipDevice = name_hip_device


def _version_info() -> dict:
    from rocprof._version import __version__ as v

    nums = [int(x) if x.isdigit() else 0 for x in (v.split(".") + ["0", "0"])[:3]]
    return {"version": v, "major": nums[0], "minor": nums[1], "patch": nums[2]}


version_info = _version_info()

from . import context_decorators  # noqa: E402 - ROCm's submodule, needs the names above

__all__ = [
    "range", "push", "pop", "mark", "start", "stop", "pause", "resume", "name_thread",
    "get_thread_id", "Range", "rangePush", "rangePop", "rangeStart", "rangeStop",
    "profilerPause", "profilerResume", "nameOsThread", "getThreadId", "name_hip_device",
    "nameHipDevice", "hip_device_names", "context_decorators", "version_info",
]
