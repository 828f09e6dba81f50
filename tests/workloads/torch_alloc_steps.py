"""Steps that allocate device memory through the stand-in of PyTorch's caching-allocator trace
hook (rocprof._torch_observer._standin_trace; tests/integration/test_bounded_figures.py): N
ROCTx steps "step", each allocating a 2 MiB block and freeing it; step --leak-at also allocates
a 4 MiB block it never frees. Run under `rocprof run --max-size ... --memory-allocation-trace`."""

import argparse

import roctx
import torch  # noqa: F401  (the observer's allocator hook is built against it)
from rocprof import _torch_observer as obs

ALLOC, FREE_REQUESTED, SEGMENT_ALLOC = 0, 1, 3
MiB = 1 << 20
SEG = 0x7F0000000000

p = argparse.ArgumentParser()
p.add_argument("steps", type=int)
p.add_argument("--leak-at", type=int, default=-1)
a = p.parse_args()
obs._standin_trace(SEGMENT_ALLOC, 0, SEG, 64 * MiB)
for i in range(a.steps):
    with roctx.range("step"):
        obs._standin_trace(ALLOC, 0, SEG, 2 * MiB)
        if i == a.leak_at:
            obs._standin_trace(ALLOC, 0, SEG + 32 * MiB, 4 * MiB)
        obs._standin_trace(FREE_REQUESTED, 0, SEG, 2 * MiB)
