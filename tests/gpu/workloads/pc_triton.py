"""A Triton kernel with a loop, for PC sampling (tests/gpu/test_gpu_pc_sampling.py): its samples
must map to lines of this file. The kernel's lines are between the KERNEL-BEGIN/END markers."""

import torch
import triton
import triton.language as tl


@triton.jit  # KERNEL-BEGIN
def spin(x_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = a + 1.0
    for _ in range(iters):
        a = a * b + 1e-7
        b = b * a + 1e-7
    tl.store(out_ptr + offs, a + b, mask=mask)  # KERNEL-END


def main():
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    for _ in range(10):
        spin[(n // 1024,)](x, out, n, 20000, BLOCK=1024)
    torch.cuda.synchronize()
    print("done", float(out[0]))


if __name__ == "__main__":
    main()
