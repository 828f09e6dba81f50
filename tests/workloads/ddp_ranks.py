"""Two torchrun ranks on the CPU (gloo): each records a range named after its rank."""
import os

import roctx
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
with roctx.range(f"rank-{rank}-allreduce"):
    t = torch.ones(4) * (rank + 1)
    dist.all_reduce(t)
assert t.tolist() == [3.0] * 4
dist.destroy_process_group()
print("rank", rank, "env", os.environ["RANK"])
