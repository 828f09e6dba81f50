"""Allocations on two streams (tests/gpu/test_gpu_memory_capture.py): 4 MiB tensors made on the
default stream and on a side stream, each with a kernel there. Under rocprof the caching
allocator's rows must carry the stream ids the kernels of the same stream carry. Prints one JSON
line: each stream's handle and the driver's id of it (cuStreamGetId, CUDA 12+)."""

import ctypes
import json

import torch

side = torch.cuda.Stream()
x = torch.ones(1 << 20, device="cuda") * 2  # the default stream
with torch.cuda.stream(side):
    y = torch.ones(1 << 20, device="cuda") * 3  # the side stream
torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
out = {}
for name, handle in (("default", torch.cuda.default_stream().cuda_stream), ("side", side.cuda_stream)):
    sid = ctypes.c_ulonglong(0)
    rc = cu.cuStreamGetId(ctypes.c_void_p(handle), ctypes.byref(sid))
    out[name] = {"handle": handle, "rc": rc, "cuStreamGetId": sid.value}
print(json.dumps(out))
