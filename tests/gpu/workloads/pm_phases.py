"""GPU metrics workload: a settle pause (the sampler sets the GPU up on the first CUDA context),
back-to-back bf16 GEMMs inside ROCTx range "gemm", then device-to-device copies inside "copy".
Prints one JSON line: each phase's seconds and milliseconds per step (10 launches and a sync),
for the cost of sampling. --only gemm --steps N: N GEMM steps alone (the --pmc replay run).
--pause-middle: GEMMs in "gemm", then GEMMs with the session paused (roctx.pause), then GEMMs
again in "gemm_after" once resumed (a paused session stops the GPU's sampling)."""

import argparse
import json
import time

import roctx
import torch

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, default=1.5, help="seconds of each phase")
p.add_argument("--settle", type=float, default=2.0, help="idle seconds before the phases")
p.add_argument("--n", type=int, default=8192)
p.add_argument("--only", choices=("gemm", "copy"), default=None)
p.add_argument("--steps", type=int, default=0, help="with --only: this many steps, no timing")
p.add_argument("--pause-middle", action="store_true", help="gemm, gemm paused, gemm_after")
a = p.parse_args()

x = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
y = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
src = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)  # 1 GiB
dst = torch.empty_like(src)
for _ in range(3):
    x @ y
    dst.copy_(src)
torch.cuda.synchronize()
time.sleep(a.settle)
out = {}
work = {"gemm": lambda: x @ y, "copy": lambda: dst.copy_(src)}


def phase(name, kind=None):
    with roctx.range(name):
        steps, t0 = 0, time.perf_counter()
        while (time.perf_counter() - t0 < a.seconds) if not a.steps else steps < a.steps:
            for _ in range(10):  # queued ahead: the GPU never waits for the host
                work[kind or name]()
            torch.cuda.synchronize()
            steps += 1
        dt = time.perf_counter() - t0
    out[f"{name}_s"] = dt
    out[f"{name}_step_ms"] = dt / steps * 1e3


if a.pause_middle:
    phase("gemm")
    roctx.pause()
    phase("gemm_paused", "gemm")
    roctx.resume()
    phase("gemm_after", "gemm")
else:
    for name in (a.only,) if a.only else ("gemm", "copy"):
        phase(name)
time.sleep(0.2)  # an idle tail: the last phase's end shows in the samples
print(json.dumps(out))
