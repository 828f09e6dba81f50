"""A small model captured in a CUDA graph and replayed (tests/gpu/test_gpu_graphs.py).

--mode graph: torch.cuda.CUDAGraph capture of the forward pass, then --steps replays.
--mode compiled: torch.compile(mode="reduce-overhead"), whose cudagraph trees capture and replay.
The lines the tests look for end with their markers."""

import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=("graph", "compiled"), default="graph")
p.add_argument("--steps", type=int, default=20)
a = p.parse_args()

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256),
                            torch.nn.LayerNorm(256)).cuda().eval()
x = torch.randn(64, 256, device="cuda")

with torch.no_grad():
    if a.mode == "graph":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):  # warm-up on a side stream, as torch's docs do before capture
                model(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = model(x)  # CAPTURE_LINE
        for _ in range(a.steps):
            g.replay()  # REPLAY_LINE
    else:
        f = torch.compile(model, mode="reduce-overhead")
        for _ in range(a.steps):
            y = f(x)  # COMPILED_LINE
    torch.cuda.synchronize()
print("done", float(y.float().sum()))
