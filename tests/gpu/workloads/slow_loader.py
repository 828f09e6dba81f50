"""A training loop whose GPU idles because the host loads each batch slowly: the loader sleeps
(the line marked SLOW_LOAD) outside the ROCTx range "step"; each step uploads the batch, runs a
small MLP forward/backward/optimizer step and ends in loss.item() (a copy to the host and a
stream synchronisation). The batch and the hidden layer are large enough that the step's
kernels keep the GPU busy (the step is not launch-bound), so the one cause is the loader. The
guided analysis must find the GPU idle between steps, caused by
the loader, under --sys-trace as under the default trace (not the synchronisation, not the
model's creation). Prints one JSON line: {"ms_per_step": ...}."""

import argparse
import json
import time

import roctx
import torch


def load(batch: int, seconds: float):
    time.sleep(seconds)  # SLOW_LOAD
    return torch.ones(batch, 512)  # cheap: the time is the sleep above


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--load-ms", type=float, default=20.0)
    a = p.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(512, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).to(dev)  # MODEL
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # One step outside the ROCTx range first: CUDA loads each kernel at its first use and cuBLAS
    # makes its handle then, hundreds of ms that would otherwise fall inside the first "step".
    loss = model(torch.randn(4096, 512, device=dev)).square().mean()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        x = load(4096, a.load_ms / 1000)
        with roctx.range("step"):
            xb = x.to(dev)  # UPLOAD
            loss = model(xb).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss.item()  # ITEM
    print(json.dumps({"ms_per_step": 1000 * (time.perf_counter() - t0) / a.steps}))


if __name__ == "__main__":
    main()
