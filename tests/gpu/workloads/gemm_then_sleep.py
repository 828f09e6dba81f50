"""GPU utilisation workload: a long bf16 GEMM loop inside ROCTx range "gemm", then an idle GPU
inside "sleep" (time.sleep). Prints one JSON line: matmuls done and the seconds of each phase."""

import argparse
import json
import time

import roctx
import torch

p = argparse.ArgumentParser()
p.add_argument("--gemm", type=float, default=4.0, help="seconds of back-to-back matmuls")
p.add_argument("--sleep", type=float, default=4.0, help="seconds of an idle GPU")
p.add_argument("--n", type=int, default=4096)
a = p.parse_args()

x = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
y = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    x @ y
torch.cuda.synchronize()
done = 0
with roctx.range("gemm"):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < a.gemm:
        for _ in range(20):  # queued ahead: the GPU never waits for the host
            z = x @ y
        done += 20
        z.sum().item()  # bounds the queue without draining it between batches
    torch.cuda.synchronize()
    gemm_s = time.perf_counter() - t0
with roctx.range("sleep"):
    t0 = time.perf_counter()
    time.sleep(a.sleep)
    sleep_s = time.perf_counter() - t0
print(json.dumps({"matmuls": done, "gemm_s": gemm_s, "sleep_s": sleep_s}))
