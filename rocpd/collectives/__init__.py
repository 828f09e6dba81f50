"""Collective communication calls (NCCL/RCCL) as recorded by ``rocprof run --rccl-trace``: one
row per call with its size, communicator, rank, stream and kernel, algorithm and bus bandwidth
(nccl-tests' definitions), summaries per operation and size, clock offsets between hosts
estimated from collective completions, and the queue length of each GPU stream over time.

    calls = rocpd.collectives.calls(db)        # one row per call, with kernel times and bandwidth
    rocpd.collectives.summary(calls)           # per operation and size bucket (powers of 2)
    rocpd.collectives.clock_offsets(calls)     # per host: offset to the reference host, ± bound
    rocpd.collectives.queue_lengths(db)        # per stream: launched-not-finished over time

Calls are stored as ROCm stores RCCL API calls: rocpd_region rows of category RCCL_API named by
the API function, their arguments in rocpd_arg (docs/rocpd-schema.md).
"""

from __future__ import annotations

from .bandwidth import bus_factor, message_bytes, size_bucket, summary
from .calls import CATEGORY, calls, plugin_state
from .clock import clock_offsets
from .queue import queue_lengths, queue_summary

__all__ = ["CATEGORY", "calls", "plugin_state", "bus_factor", "message_bytes", "size_bucket",
           "summary", "clock_offsets", "queue_lengths", "queue_summary"]
