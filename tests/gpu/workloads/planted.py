"""Training-like steps with problems planted on purpose, for the guided analysis (issue 18).

  --sync            torch.cuda.synchronize() after every op of the step (the line marked
                    PLANTED_SYNC): the analysis must report it with that line
  --upload KIND     each step uploads a 16 MB batch from pageable or pinned host memory
                    (KIND: none, pageable, pinned)
  --steps N
Each step is a ROCTx range "step". Prints one JSON line: {"ms_per_step": ...}.
"""

import argparse
import json
import time

import roctx
import torch


def step(w, x, sync: bool):
    # One kernel per op, so that "a synchronisation after every launch" is exact.
    ops = (lambda h: h @ w, torch.tanh, lambda h: h.mul(0.5), lambda h: h.add(0.1))
    h = x
    for _ in range(8):
        for op in ops:
            h = op(h)
            if sync:
                torch.cuda.synchronize()  # PLANTED_SYNC
    return h.sum()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sync", action="store_true")
    p.add_argument("--upload", choices=("none", "pageable", "pinned"), default="none")
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    w = torch.randn(512, 512, device=dev) / 20
    x = torch.randn(256, 512, device=dev)
    host = torch.randn(4 << 20)  # 16 MB of float32
    if a.upload == "pinned":
        host = host.pin_memory()
    step(w, x, False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        with roctx.range("step"):
            if a.upload != "none":
                batch = host.to(dev, non_blocking=a.upload == "pinned")  # UPLOAD
                x = x + batch[: x.numel()].view_as(x) * 1e-3
            loss = step(w, x, a.sync)
    torch.cuda.synchronize()
    print(json.dumps({"ms_per_step": 1000 * (time.perf_counter() - t0) / a.steps,
                      "loss": float(loss.detach())}))


if __name__ == "__main__":
    main()
