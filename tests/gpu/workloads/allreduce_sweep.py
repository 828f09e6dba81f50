"""Two torchrun ranks: an all-reduce sweep over float32 tensors of 1 KiB to 256 MiB (powers of 4),
ITERS calls per size after one warm-up call, each call timed with CUDA events around it on the
current stream (nccl-tests' way of timing on the GPU). Writes rank<R>_sweep.json beside the
databases: per size the bytes, the calls in order, and the event-timed mean. Run by
tests/gpu/test_gpu_collectives.py."""
import json
import os
import sys

import torch
import torch.distributed as dist

ITERS = 5
SIZES = [1 << k for k in range(10, 29, 2)]  # bytes: 1 KiB .. 256 MiB

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
out = {"nranks": dist.get_world_size(), "nccl": ".".join(map(str, torch.cuda.nccl.version())),
       "sizes": []}
for size in SIZES:
    x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    dist.all_reduce(x)  # warm-up: connections, buffers
    times = []
    for _ in range(ITERS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dist.all_reduce(x)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e6)  # ns
    out["sizes"].append({"bytes": size, "calls": ITERS + 1, "event_ns": sum(times) / len(times)})
torch.cuda.synchronize()
dist.destroy_process_group()
with open(os.path.join(sys.argv[1], f"rank{rank}_sweep.json"), "w") as f:
    json.dump(out, f)
print("rank", rank, "done")
