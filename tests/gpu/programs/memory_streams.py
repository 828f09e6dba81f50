"""Allocations on two streams (tests/gpu/test_gpu_memory_capture.py): 4 MiB tensors made on the
default stream and on a side stream, each with a kernel there. Under rocprof the caching
allocator's rows must carry the stream ids the kernels of the same stream carry. Prints one JSON
line: each stream's handle, the driver's id of it (cuStreamGetId, CUDA 12+) and the ids CUPTI's
cuptiGetStreamIdEx gives for it, asked in the ways a profiler could ask."""

import ctypes
import json

import torch

side = torch.cuda.Stream()
x = torch.ones(1 << 20, device="cuda") * 2  # the default stream
with torch.cuda.stream(side):
    y = torch.ones(1 << 20, device="cuda") * 3  # the side stream
torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
cupti_path = next((ln.split()[-1] for ln in open("/proc/self/maps") if "libcupti" in ln), None)
cupti = ctypes.CDLL(cupti_path) if cupti_path else None
ctx = ctypes.c_void_p(0)
cu.cuCtxGetCurrent(ctypes.byref(ctx))
out = {"cupti": cupti_path}


def cupti_id(context, stream, per_thread):
    sid = ctypes.c_uint32(0)
    rc = cupti.cuptiGetStreamIdEx(context, ctypes.c_void_p(stream), ctypes.c_uint8(per_thread),
                                  ctypes.byref(sid))
    return [rc, sid.value]


for name, handle in (("default", torch.cuda.default_stream().cuda_stream), ("side", side.cuda_stream),
                     ("legacy(1)", 1), ("per-thread(2)", 2)):
    sid = ctypes.c_ulonglong(0)
    rc = cu.cuStreamGetId(ctypes.c_void_p(handle), ctypes.byref(sid))
    out[name] = {"handle": handle, "cuStreamGetId": [rc, sid.value]}
    if cupti is not None:
        out[name]["cupti(null ctx)"] = cupti_id(None, handle, 0)
        out[name]["cupti(ctx)"] = cupti_id(ctx, handle, 0)
        out[name]["cupti(null ctx, per-thread)"] = cupti_id(None, handle, 1)
print(json.dumps(out))
