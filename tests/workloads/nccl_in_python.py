"""Test-only: what NCCL does with a profiler plugin, done from a profiled Python process (as in a
torchrun rank, where the session runs before NCCL loads the plugin): load the library named in
NCCL_PROFILER_PLUGIN, then through ncclProfiler_v5 (layouts of NCCL's profiler_v5.h) init a
communicator (hash 0xBEEF, 2 ranks, rank 0) and make one ungrouped ncclAllReduce of 1024
float32: group API event start, API event start/stop, group API event stop."""
import ctypes
import os

c_int_p = ctypes.POINTER(ctypes.c_int)
INIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64, c_int_p,
                        ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
START = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                         ctypes.c_void_p)
STOP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
STATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
FINALIZE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class Profiler(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("init", INIT), ("startEvent", START),
                ("stopEvent", STOP), ("recordEventState", STATE), ("finalize", FINALIZE)]


class CollApi(ctypes.Structure):
    _fields_ = [("func", ctypes.c_char_p), ("count", ctypes.c_size_t), ("datatype", ctypes.c_char_p),
                ("root", ctypes.c_int), ("stream", ctypes.c_void_p), ("graphCaptured", ctypes.c_bool)]


class Descr(ctypes.Structure):  # the union's largest member is 96 bytes or less: pad to 128
    _fields_ = [("type", ctypes.c_uint64), ("parentObj", ctypes.c_void_p), ("rank", ctypes.c_int),
                ("collApi", CollApi), ("_pad", ctypes.c_char * 64)]


GROUP_API, COLL_API = 1 << 8, 1 << 9
lib = ctypes.CDLL(os.environ["NCCL_PROFILER_PLUGIN"])
p = Profiler.in_dll(lib, "ncclProfiler_v5")
ctx, mask = ctypes.c_void_p(), ctypes.c_int()
assert p.init(ctypes.byref(ctx), 0xBEEF, ctypes.byref(mask), b"py-comm", 1, 2, 0, None) == 0
assert mask.value & COLL_API and mask.value & GROUP_API
group, api = ctypes.c_void_p(), ctypes.c_void_p()
p.startEvent(ctx, ctypes.byref(group), ctypes.byref(Descr(type=GROUP_API)))
d = Descr(type=COLL_API, rank=0, collApi=CollApi(b"AllReduce", 1024, b"ncclFloat32", 0, 0x77, False))
p.startEvent(ctx, ctypes.byref(api), ctypes.byref(d))
p.stopEvent(api)
p.stopEvent(group)
p.finalize(ctx)
print("done")
