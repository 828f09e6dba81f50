"""A copy kernel of a known size, for per-kernel counter checks (tests/gpu/test_gpu_counters.py,
benchmarks/gpu_counters.py): y = x * 1.0 over N bytes of float32 reads exactly N bytes of x and
writes N bytes of y. Before it, a flush kernel writes a buffer of twice the L2's size, so none
of x is still in L2 and every byte of x comes from DRAM.

    python tests/gpu/workloads/counters_copy.py --mib 1024
Prints one JSON line: {"bytes": N, "l2_bytes": ...}.
"""

import argparse
import json

import roctx
import torch

p = argparse.ArgumentParser()
p.add_argument("--mib", type=int, default=1024)
a = p.parse_args()
dev = torch.device("cuda")
n = a.mib << 18  # float32 elements
x = torch.ones(n, device=dev)
y = torch.empty_like(x)
l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or (64 << 20)
flush = torch.empty(2 * l2 // 4, device=dev)
with roctx.range("flush_l2"):
    flush.fill_(2.0)
torch.cuda.synchronize()
with roctx.range("copy"):
    torch.mul(x, 1.0, out=y)
torch.cuda.synchronize()
assert float(y[-1]) == 1.0
print(json.dumps({"bytes": n * 4, "l2_bytes": l2}))
