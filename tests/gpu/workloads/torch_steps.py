"""Deterministic training steps on CUDA for tests/gpu and benchmarks/gpu_b2_*: a small CNN
(default) or, with --model transformer, a small launch-bound transformer encoder under bf16
autocast (~300 kernels per step, most of them a few microseconds: the launch path dominates).

  --mode plain      just run (under `rocprof run` or not)
  --mode torchprof  the same steps under torch.profiler (CPU+CUDA); writes --trace JSON
Prints one JSON line: {"ms_per_step":..., "kernels":..., "names":[...]} (kernels/names only
for torchprof: what torch.profiler recorded for the whole run).
"""

import argparse
import contextlib
import json
import time

import roctx
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, 100)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.conv2(x))), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class Transformer(nn.Module):
    """4 pre-norm encoder layers, d_model 256, 4 heads, sequence 128, batch 16, 100 classes."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        self.embed = nn.Linear(64, 256)
        self.head = nn.Linear(256, 100)

    def forward(self, x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return self.head(self.encoder(self.embed(x)).mean(1)).float()


def step(model, opt, x, y):
    with roctx.range("forward"):
        loss = F.cross_entropy(model(x), y)
    with roctx.range("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with roctx.range("optimizer"):
        opt.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=("plain", "torchprof"), default="plain")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--paused-steps", type=int, default=0)
    p.add_argument("--trace", default=None)
    p.add_argument("--model", choices=("cnn", "transformer"), default="cnn")
    a = p.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    prof = contextlib.nullcontext()
    if a.mode == "torchprof":
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with prof as p_:
        if a.model == "transformer":
            model = Transformer().to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
            x = torch.randn(16, 128, 64, device=dev)
            y = torch.randint(0, 100, (16,), device=dev)
        else:
            model = Net().to(dev)
            opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            x = torch.randn(128, 3, 32, 32, device=dev)
            y = torch.randint(0, 100, (128,), device=dev)
        for _ in range(a.warmup):
            step(model, opt, x, y)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step(model, opt, x, y)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        if a.paused_steps:
            roctx.pause()
            for _ in range(a.paused_steps):
                step(model, opt, x, y)
            torch.cuda.synchronize()
            roctx.resume()
    out = {"ms_per_step": 1000 * elapsed / max(a.steps, 1)}
    if a.mode == "torchprof":
        path = a.trace or "/tmp/torchprof_trace.json"
        p_.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
        kernels = [e["name"] for e in events if e.get("cat") == "kernel"]
        out.update(kernels=len(kernels), names=sorted(set(kernels)), events=len(events))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
