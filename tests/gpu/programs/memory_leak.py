"""A training-like loop with a planted GPU memory leak: every step appends one tensor of
LEAK_BYTES (4 MiB) to a list that lives for the whole run (the line marked LEAK LINE); every
other tensor of the step is freed by the step's end. Each step is a ROCTx range "step".
Prints `ROCPROF_TORCH_STATS {...}` at exit (torch.cuda.memory_stats() of device 0 and
leak_bytes_per_step, steps)."""

import argparse
import os
import sys

import roctx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torch_stats import print_at_exit  # noqa: E402

LEAK_BYTES = 4 << 20  # float32 elements * 4


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=24)
    a = p.parse_args()
    planted = {"leak_bytes_per_step": LEAK_BYTES, "steps": a.steps}
    print_at_exit(planted)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    history = []
    for i in range(a.steps):
        with roctx.range("step"):
            x = torch.randn(256, 1024, device=dev)
            loss = model(x).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            history.append(torch.full((LEAK_BYTES // 4,), float(i), device=dev))  # LEAK LINE
            del x, loss
        torch.cuda.synchronize()
    planted["kept"] = len(history)


if __name__ == "__main__":
    main()
