"""Allocates CHUNK_BYTES (--chunk-gib, 4 GiB by default) at a time on the GPU, keeping every
chunk, until torch.cuda.OutOfMemoryError, which is left uncaught (the line marked OOM LINE):
the program dies of it. Each allocation is a ROCTx range "step". Prints
`ROCPROF_TORCH_STATS {...}` at exit, after the traceback (torch.cuda.memory_stats() of device 0,
chunk_bytes and the number of chunks allocated)."""

import argparse
import os
import sys

import roctx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_stats import print_at_exit  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chunk-gib", type=float, default=4.0)
    a = p.parse_args()
    chunk = int(a.chunk_gib * (1 << 30)) // 512 * 512
    planted = {"chunk_bytes": chunk, "chunks": 0}
    print_at_exit(planted)
    dev = torch.device("cuda")
    chunks = []
    while True:
        with roctx.range("step"):
            chunks.append(torch.empty(chunk, dtype=torch.uint8, device=dev))  # OOM LINE
            planted["chunks"] = len(chunks)


if __name__ == "__main__":
    main()
