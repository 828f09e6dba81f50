"""NCCL's device buffers on one GPU: a one-rank NCCL process group (NCCL refuses two ranks on
one device) whose first collective creates the communicator inside ROCTx range "nccl". Under
`rocprof run --memory-allocation-trace` the runtime-level rows (level REAL) that start inside
that range and are not the caching allocator's segments are NCCL's. Prints one JSON line: the
allocator's reserved bytes before and after (torch does not count NCCL's)."""

import json
import os

import roctx
import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
torch.cuda.set_device(0)
x = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
reserved0 = torch.cuda.memory_reserved()
dist.init_process_group("nccl", rank=0, world_size=1)
with roctx.range("nccl"):
    dist.all_reduce(x)  # the communicator (and its buffers) is made here, on first use
    torch.cuda.synchronize()
with roctx.range("steady"):
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
out = {"reserved_before": reserved0, "reserved_after": torch.cuda.memory_reserved(),
       "sum": float(x[0].item()), "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
dist.destroy_process_group()
print(json.dumps(out))
