"""Energy workload: back-to-back bf16 GEMMs inside ROCTx range "gemm", an idle GPU inside
"sleep" (time.sleep), device-to-device copies inside "copy". Prints one JSON line: the seconds
of each phase."""

import argparse
import json
import time

import roctx
import torch

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, default=5.0, help="seconds of each phase")
p.add_argument("--n", type=int, default=8192)
a = p.parse_args()

x = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
y = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
src = torch.empty(1 << 28, device="cuda", dtype=torch.uint8)  # 256 MiB
dst = torch.empty_like(src)
for _ in range(3):
    x @ y
    dst.copy_(src)
torch.cuda.synchronize()
out = {}


def loop(name, work):
    with roctx.range(name):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < a.seconds:
            for _ in range(10):  # queued ahead: the GPU never waits for the host
                work()
            torch.cuda.synchronize()
        out[f"{name}_s"] = time.perf_counter() - t0


loop("gemm", lambda: x @ y)
with roctx.range("sleep"):
    t0 = time.perf_counter()
    time.sleep(a.seconds)
    out["sleep_s"] = time.perf_counter() - t0
loop("copy", lambda: dst.copy_(src))
print(json.dumps(out))
