"""Shared by the memory_*.py GPU programs: the allocator's own figures as one line
`ROCPROF_TORCH_STATS {json}` (torch.cuda.memory_stats() of device 0 plus what the program
planted), printed at exit, so that an uncaught exception still prints it."""

import atexit
import json
import sys

KEYS = ("allocated_bytes.all.peak", "allocated_bytes.all.current", "reserved_bytes.all.peak",
        "reserved_bytes.all.current", "active_bytes.all.peak", "segment.all.peak",
        "num_alloc_retries", "num_ooms", "allocation.all.allocated", "allocation.all.freed")


def print_at_exit(planted: dict) -> None:
    """Registers the printing; `planted` may be filled in until the program ends."""

    def _print():
        import torch

        stats = torch.cuda.memory_stats(0)
        out = {k: int(stats.get(k, 0)) for k in KEYS}
        out.update(planted)
        sys.stdout.write("ROCPROF_TORCH_STATS " + json.dumps(out, sort_keys=True) + "\n")
        sys.stdout.flush()

    atexit.register(_print)
