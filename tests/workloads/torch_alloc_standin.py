"""A real CPU PyTorch program whose "GPU allocations" come from the stand-in of PyTorch's
caching-allocator trace hook (rocprof._torch_observer._standin_trace: synthetic TraceEntry
actions through the same event function the real hook calls). Run under
`rocprof run --memory-allocation-trace`; each action's line is marked for the test to find.

argv[1]: "plain" (the actions below), "oom" (then dies of an uncaught
torch.cuda.OutOfMemoryError), "burst N" (N block actions in one go, to overflow the buffers),
"gil N" (one action, then the GIL held by sum(range(N))).
"""

import json
import sys

import torch
from rocprof import _torch_observer as obs

(ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP,
 SNAPSHOT, OOM) = range(9)
MiB = 1 << 20
SEG = 0x7F0000000000
STREAM = 0x5A5A00


def model_step():
    obs._standin_trace(SEGMENT_ALLOC, 0, SEG, 20 * MiB, STREAM)  # LINE_SEGMENT
    obs._standin_trace(ALLOC, 0, SEG, 3 * MiB + 1, STREAM)  # LINE_BLOCK
    obs._standin_trace(ALLOC, 0, SEG + 4 * MiB, 100)  # LINE_SMALL
    obs._standin_trace(FREE_REQUESTED, 0, SEG, 3 * MiB + 1, STREAM)  # LINE_FREE
    obs._standin_trace(FREE_COMPLETED, 0, SEG, 3 * MiB + 1, STREAM)  # not stored
    obs._standin_trace(SNAPSHOT, 0, 0, 0)  # not stored


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        # As on autograd's device threads: no Python frames on the allocating thread.
        obs._standin_trace(ALLOC, 0, SEG + 8 * MiB, 4096, native_thread=True)
        return g * 2


def main():
    mode = sys.argv[1]
    print(json.dumps({"status": obs.allocator_status()}), flush=True)
    if mode == "plain":
        model_step()
        x = torch.ones(4, requires_grad=True)
        Twice.apply(x).sum().backward()  # LINE_BACKWARD
        obs._standin_trace(SEGMENT_MAP, 1, SEG + 64 * MiB, 2 * MiB)  # LINE_MAP
        obs._standin_trace(SEGMENT_UNMAP, 1, SEG + 64 * MiB, 2 * MiB)  # LINE_UNMAP
        obs._standin_trace(SEGMENT_FREE, 0, SEG, 20 * MiB, STREAM)  # LINE_SEGMENT_FREE
    elif mode == "oom":
        model_step()
        obs._standin_trace(OOM, 0, 123 * MiB, 4096 * MiB, STREAM)  # LINE_OOM
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")
    elif mode == "gil":
        # A new line, then the GIL held in one C call for a while: the launch sites' resolver
        # (which needs the GIL) cannot name it before the drain takes the record.
        obs._standin_trace(ALLOC, 0, SEG, 4096)  # LINE_GIL
        print(json.dumps({"sum": sum(range(int(sys.argv[2])))}), flush=True)
    elif mode == "burst":
        obs._standin_trace(ALLOC, 0, SEG, 512, repeat=int(sys.argv[2]))  # LINE_BURST


if __name__ == "__main__":
    main()
