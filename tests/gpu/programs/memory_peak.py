"""A training-like loop with a planted 1 GiB temporary (the line marked PEAK LINE) in one step
(--peak-step, the middle one by default), used and freed right after: the device's peak of
allocated memory is that step's, and the temporary is the largest thing live there. Each step is
a ROCTx range "step". Prints `ROCPROF_TORCH_STATS {...}` at exit (torch.cuda.memory_stats() of
device 0 and peak_temp_bytes)."""

import argparse
import os
import sys

import roctx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_stats import print_at_exit  # noqa: E402

TEMP_BYTES = 1 << 30


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--peak-step", type=int, default=None)
    a = p.parse_args()
    peak_step = a.steps // 2 if a.peak_step is None else a.peak_step
    planted = {"peak_temp_bytes": TEMP_BYTES, "steps": a.steps, "peak_step": peak_step}
    print_at_exit(planted)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 2048)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for i in range(a.steps):
        with roctx.range("step"):
            x = torch.randn(512, 2048, device=dev)
            loss = model(x).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if i == peak_step:
                tmp = torch.empty(TEMP_BYTES, dtype=torch.uint8, device=dev)  # PEAK LINE
                tmp.fill_(1)
                planted["temp_sum"] = int(tmp[:1024].sum())
                del tmp
            del x, loss
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
