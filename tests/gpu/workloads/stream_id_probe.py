"""Probe (not a test): do the driver's stream ids (cuStreamGetId, CUDA 12+) equal the stream ids
CUPTI gives kernels? Run under `rocprof run --kernel-trace`; prints each stream's handle and
driver id, one JSON line; compare with `SELECT DISTINCT stream_id FROM rocpd_kernel_dispatch`.
(The caching allocator names streams by handle; its rows carry stream_id 0 until mapped.)"""

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
