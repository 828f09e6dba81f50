"""Two torchrun ranks on two GPUs (NCCL): a few matmuls and an all-reduce per step, each step
in a ROCTx range named after the rank. Run by tests/gpu/run_on_gpu_host.sh."""
import os

import roctx
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
a = torch.randn(512, 512, device="cuda")
for _ in range(5):
    with roctx.range(f"rank-{rank}-step"):
        b = a @ a
        dist.all_reduce(b)
torch.cuda.synchronize()
dist.destroy_process_group()
print("rank", rank, "done")
