"""Inference steps of a small MLP for `rocpd diff` on a GPU: run it twice, the second time with
``--widen 4``, and the diff must name the widened layer's line (marked WIDENED_LAYER) first.

  --widen K   the middle layer K times wider (its output; the next layer's input follows)
  --steps N   ROCTx "step" ranges, after 5 warm-up iterations outside any step (cuBLAS picks
              its kernels there)
  --train     a training step instead (forward, loss.backward(), SGD, loss.item()): a small
              model's training loop is host-paced, its GPU idle moving from run to run
Each inference step ends with torch.cuda.synchronize(), so a step's time is its GPU work. In
training the backward kernels carry the line of the ``loss.backward()`` call (or the layer's own,
as "(backward)"), which grows with the layer as well. Prints one JSON line: {"ms_per_step": ...}.
"""

import argparse
import json
import time

import roctx
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width: int, widen: int):
        super().__init__()
        self.inp = nn.Linear(1024, width)
        self.mid = nn.Linear(width, width * widen)
        self.out = nn.Linear(width * widen, 256)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        x = torch.relu(self.mid(x))  # WIDENED_LAYER
        return self.out(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--widen", type=int, default=1)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8192)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--train", action="store_true")
    a = p.parse_args()
    if a.train:
        train(a)
        return
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Net(a.width, a.widen).to(dev).eval()
    x = torch.randn(a.batch, 1024, device=dev)
    with torch.no_grad():
        for _ in range(5):
            model(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            with roctx.range("step"):
                model(x)
                torch.cuda.synchronize()
    print(json.dumps({"ms_per_step": (time.perf_counter() - t0) * 1e3 / a.steps}))


def train(a):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Net(a.width, a.widen).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(a.batch, 1024, device=dev)
    for _ in range(5):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        with roctx.range("step"):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            loss.item()
    print(json.dumps({"ms_per_step": (time.perf_counter() - t0) * 1e3 / a.steps}))


if __name__ == "__main__":
    main()
