"""Multi-host rank databases with collective calls, written through the real writer
(rocpd.testing.DatabaseBuilder): each host's clock has a planted offset, and every collective
ends on all ranks within a planted latency of one true moment. Used by test_collectives.py."""

from __future__ import annotations

import os
import random

from rocpd.testing import DatabaseBuilder

KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
COMM = 0xC0FFEE
SIZES = [1 << k for k in range(10, 29, 2)]  # 1 KiB .. 256 MiB


def build_multihost(folder, skews_ns: list[int], ranks_per_host: int = 2, calls: int = 60,
                    latency_ns: int = 20_000, seed: int = 0, with_seq: bool = True,
                    late_rank: int | None = None) -> list[str]:
    """One database per rank, ``len(skews_ns)`` hosts ("node00", ...), host h's clock reading
    ``skews_ns[h]`` ahead of true time. Collective i (an all-reduce of SIZES[i % len] bytes,
    float32) ends at true time T_i + u on each rank, u uniform in [0, latency_ns]; ranks arrive
    at different times before it (their kernels start then); ``late_rank`` arrives last, 10 µs
    before the end, every time."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    nranks = len(skews_ns) * ranks_per_host
    t = 5_000_000_000
    plan = []  # per call: {rank: (arrival, end)}
    for _ in range(calls):
        t += 3_000_000
        ends = {}
        for r in range(nranks):
            arrival = t - (10_000 if r == late_rank else rng.randint(50_000, 900_000))
            ends[r] = (arrival, t + rng.randint(0, latency_ns))
        plan.append(ends)
    paths = []
    for r in range(nranks):
        h = r // ranks_per_host
        skew = skews_ns[h]
        path = os.path.join(os.fspath(folder), f"rank{r}_results.db")
        if os.path.exists(path):
            os.unlink(path)
        with DatabaseBuilder(path, pid=50_000 + r, hostname=f"node{h:02d}", rank=r) as b:
            for i, ends in enumerate(plan):
                arrival, end = ends[r]
                size = SIZES[i % len(SIZES)]
                b.collective("ncclAllReduce", arrival - 8_000 + skew, arrival - 2_000 + skew,
                             count=size // 4, datatype="ncclFloat32", comm=COMM, rank=r,
                             nranks=nranks, stream=0x7000, seq=i if with_seq else None,
                             algo="Ring", proto="LL", nchannels=2)
                b.kernel(KERNEL, arrival + skew, end + skew)
        paths.append(path)
    return paths
