"""A real CPU PyTorch training-like loop whose "GPU allocations" come from the stand-in of
PyTorch's caching-allocator trace hook (rocprof._torch_observer._standin_trace: the same event
function the real hook calls), for the memory analysis end to end on a CPU: each ROCTx "step"
takes an activation and frees it, and keeps LEAK bytes (LINE_LEAK) for ever; step PEAK_STEP also
takes a 1 GiB temporary (LINE_PEAK) and frees it. Run under
`rocprof run --memory-allocation-trace`.

argv[1]: "train" (the loop), "oom" (the loop, then a failed 8 GiB request at LINE_OOM and an
uncaught torch.cuda.OutOfMemoryError). Prints one JSON line of what was planted.
"""

import json
import sys

import roctx
import torch
from rocprof import _torch_observer as obs

ALLOC, FREE_REQUESTED, SEGMENT_ALLOC, OOM = 0, 1, 3, 8
MiB, GiB = 1 << 20, 1 << 30
SEG = 0x7F0000000000
STEPS, LEAK, PEAK_STEP = 8, 2 * MiB, 5


def main():
    mode = sys.argv[1]
    obs._standin_trace(SEGMENT_ALLOC, 0, SEG, 4 * GiB)  # LINE_SEGMENT
    w = torch.ones(256, 256)
    for k in range(STEPS):
        with roctx.range("step"):
            obs._standin_trace(ALLOC, 0, SEG + GiB, 16 * MiB)  # LINE_ACT
            w = torch.tanh(w @ w / 256)
            obs._standin_trace(FREE_REQUESTED, 0, SEG + GiB, 16 * MiB)
            obs._standin_trace(ALLOC, 0, SEG + k * LEAK, LEAK)  # LINE_LEAK
            if k == PEAK_STEP:
                obs._standin_trace(ALLOC, 0, SEG + 2 * GiB, GiB)  # LINE_PEAK
                obs._standin_trace(FREE_REQUESTED, 0, SEG + 2 * GiB, GiB)
    print(json.dumps({"steps": STEPS, "leak": LEAK, "peak": GiB + (PEAK_STEP + 1) * LEAK}),
          flush=True)
    if mode == "oom":
        obs._standin_trace(OOM, 0, 512 * MiB, 8 * GiB)  # LINE_OOM
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")


if __name__ == "__main__":
    main()
