"""ROCTx annotations for Python: ranges, marks and thread names recorded by rocprof.

    import roctx
    with roctx.range("forward"):
        ...
    @roctx.range("step")
    def step(): ...
    async with roctx.range("fetch"):   # a start/stop range: other tasks may run meanwhile
        ...

Every call is a cheap no-op when no profiler runs. The hot functions live in C
(rocprof._core); ROCm's camelCase names are kept as aliases (roctx.rangePush, ...).
"""

from __future__ import annotations

from rocprof import _core

from rocshared.version import __version__ as _VERSION

from . import _protocols

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


# Decorator use (plain, generator, coroutine and async generator functions) and `async with`
# (a start/stop range per task) are written in Python: not the `with` hot path.
_core._set_decorator(_protocols.decorate)
Range.__aenter__ = _protocols.aenter
Range.__aexit__ = _protocols.aexit

# ROCm's names (roctx.h), for code ported from C/C++ or rocprofv3's Python bindings.
rangePush = push
rangePop = pop
rangeStart = start
rangeStop = stop
profilerPause = pause
profilerResume = resume
nameOsThread = name_thread
getThreadId = get_thread_id

# NameTarget (rocprof/record.hpp): what roctxNameHipDevice / HipStream / HsaAgent name.
_HIP_DEVICE, _HIP_STREAM, _HSA_AGENT = 1, 2, 3


def _handle(obj) -> int:
    """A stream or agent as its handle's value: an int, a ctypes pointer/struct, or an object
    with ``.handle`` (hsa_agent_t) or ``.cuda_stream``/``.value`` (PyTorch streams)."""
    for attr in ("handle", "cuda_stream", "value"):
        if hasattr(obj, attr) and not isinstance(obj, int):
            obj = getattr(obj, attr)
    if obj is None:
        return 0
    if not isinstance(obj, int):
        raise TypeError(f"expected a handle (int, ctypes pointer or .handle), not {type(obj).__name__}")
    return obj


def name_hip_device(name: str, device_id: int = 0) -> int:
    """Name HIP device ``device_id`` (ROCm's roctxNameHipDevice): stored as that GPU agent's
    ``rocpd_info_agent.user_name``. Returns 0."""
    if not isinstance(name, str) or int(device_id) < 0:
        raise TypeError("roctx.nameHipDevice() takes a name string and a device id >= 0")
    _core._name_object(_HIP_DEVICE, int(device_id), name)
    return 0


def name_hip_stream(name: str, stream) -> int:
    """Name a HIP stream (ROCm's roctxNameHipStream): stored as the name of the stream row whose
    extdata handle is that stream's. Returns 0."""
    _core._name_object(_HIP_STREAM, _handle(stream), name)
    return 0


def name_hsa_agent(name: str, agent) -> int:
    """Name an HSA agent (ROCm's roctxNameHsaAgent): stored as that agent's user_name."""
    _core._name_object(_HSA_AGENT, _handle(agent), name)
    return 0


nameHipDevice = name_hip_device
nameHipStream = name_hip_stream
nameHsaAgent = name_hsa_agent


def _version_info() -> dict:
    nums = [int(x) if x.isdigit() else 0 for x in (_VERSION.split(".") + ["0", "0"])[:3]]
    return {"version": _VERSION, "major": nums[0], "minor": nums[1], "patch": nums[2]}


version_info = _version_info()

from . import context_decorators  # noqa: E402 - ROCm's submodule, needs the names above

__all__ = [
    "range", "push", "pop", "mark", "start", "stop", "pause", "resume", "name_thread",
    "get_thread_id", "Range", "rangePush", "rangePop", "rangeStart", "rangeStop",
    "profilerPause", "profilerResume", "nameOsThread", "getThreadId", "name_hip_device",
    "nameHipDevice", "name_hip_stream", "nameHipStream", "name_hsa_agent", "nameHsaAgent",
    "context_decorators", "version_info",
]
