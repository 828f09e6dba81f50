"""Three kernels at three corners of the roofline, for hardware counters and speed of light:

    python -m rocprof run --sol -d out -o sol examples/sol_demo.py
    rocpd sol out/sol_results.db --roofline roofline.png

- a bf16 matmul (N x N x N, default 8192): tensor-core bound, far right on the roofline;
- a 1 GiB elementwise copy (y = x * 1.0): DRAM bound, far left;
- a layer norm: in between.

Each runs a few times inside a ROCTx range. Needs PyTorch with a CUDA device.
"""

from __future__ import annotations

import argparse

import roctx
import torch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8192, help="matmul size (default 8192)")
    p.add_argument("--copy-mib", type=int, default=1024, help="copy size in MiB (default 1024)")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("sol_demo needs a CUDA device")
    dev = torch.device("cuda")
    x = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16)
    w = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16)
    src = torch.ones(a.copy_mib << 18, device=dev)  # float32: 4 bytes each
    dst = torch.empty_like(src)
    h = torch.randn(8192, 4096, device=dev)
    norm = torch.nn.LayerNorm(4096, device=dev)
    torch.cuda.synchronize()
    for _ in range(a.repeat):
        with roctx.range("matmul_bf16"):
            x @ w
        with roctx.range("copy"):
            torch.mul(src, 1.0, out=dst)
        with roctx.range("layer_norm"):
            norm(h)
    torch.cuda.synchronize()
    print(f"sol_demo: matmul {a.n}^3 bf16, copy {a.copy_mib} MiB, layer norm 8192x4096, "
          f"{a.repeat} times each")


if __name__ == "__main__":
    main()
