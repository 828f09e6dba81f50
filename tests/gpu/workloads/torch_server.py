"""A model serving loop for on-demand capture: one forward pass of a small MLP per request,
each in a ROCTx range req<i>, until the file argv[1] exists (or 50 s pass); prints "serving"
once CUDA is initialised and the first request is done."""
import os
import sys
import time

import roctx
import torch

stop_file = sys.argv[1]
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))  # torchrun: a GPU per rank
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 16)).cuda().eval()
x = torch.randn(64, 256, device="cuda")
deadline = time.monotonic() + 50
i = 0
with torch.no_grad():
    while time.monotonic() < deadline and not os.path.exists(stop_file):
        with roctx.range(f"req{i}"):
            model(x).sum().item()
        if i == 0:
            print("serving", flush=True)
        i += 1
        time.sleep(0.002)
print("served", i, flush=True)
