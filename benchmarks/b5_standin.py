"""B5 on the CPU box: a database shaped like the GPU host's transformer run, written by the real
writer, then measured by gpu_b5_bytes.py (bytes per record, per table and index).

The B5 goal's workload (`torch_steps.py --model transformer`, 100 steps + 30 warm-up) can only
be recorded on the GPU host. Its records go here through `rocpd.testing.DatabaseBuilder` (the
C++ RocpdSink, mapping and writer a session uses) with the same mix and value ranges: ~306
kernels per step from ~60 Python launch sites, a third launched by the autograd thread; the
forward/backward/optimizer ROCTx ranges per step, kernels of the main thread inside them;
0.12 copies and sets per kernel; CLOCK_BOOTTIME timestamps of a host up ~1 day; and with
`--sys-trace` the runtime/driver calls that survive the query filter (cudaLaunchKernel 0.77,
cuLaunchKernelEx 0.22, cudaMemsetAsync 0.09, cuKernelSetAttribute 0.05, cudaMemcpyAsync 0.04
per kernel), sharing the kernels' correlation ids and launch sites. A stand-in: the GPU host's
own figure comes from `gpu_b5_bytes.py` over a real run there.

    PYTHONPATH=python:. python3 benchmarks/b5_standin.py [--steps 130] [--sys-trace] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_b5_bytes  # noqa: E402

KERNELS_PER_STEP = 306
SITES = 60
API_PER_KERNEL = (("cudaLaunchKernel", 0.77), ("cuLaunchKernelEx", 0.22),
                  ("cudaMemsetAsync", 0.09), ("cuKernelSetAttribute", 0.05),
                  ("cudaMemcpyAsync", 0.04))


def build(path: str, steps: int, sys_trace: bool, seed: int = 1) -> None:
    from rocpd.testing import DatabaseBuilder

    rng = random.Random(seed)
    pid = 48213
    autograd = pid + 37
    names = [f"void at::native::kernel_{i}<float, {i % 7}>(at::TensorIterator)" for i in range(90)]
    sites = [("/home/user/model/transformer.py", 40 + i, f"layer{i % 12}")
             for i in range(SITES)]
    shapes = [((rng.choice((64, 128, 256, 512, 1024, 4096, 30720)), rng.choice((1, 1, 8, 32)), 1),
               (rng.choice((128, 256, 512)), 1, 1)) for _ in names]
    t = 86_400_000_000_000 + 123_456_789  # a day of CLOCK_BOOTTIME
    with DatabaseBuilder(path, pid=pid, hostname="gpu-host") as b:
        b.thread(autograd, "autograd")
        for _ in range(steps):
            phases = (("forward", pid, 0.40), ("backward", autograd, 0.45), ("optimizer", pid, 0.15))
            for phase, tid, share in phases:
                n = round(KERNELS_PER_STEP * share)
                p0 = t
                rng_corr = b.marker(phase, p0, p0 + n * 40_000 + 5_000, tid=pid)
                for _ in range(n):
                    k = rng.randrange(len(names))
                    corr = b.next_correlation()
                    site = sites[rng.randrange(SITES)]
                    launch = t + rng.randrange(2_000, 9_000)
                    if sys_trace:
                        r = rng.random()
                        acc = 0.0
                        for fn, share_api in API_PER_KERNEL:
                            acc += share_api
                            if r < acc:
                                cat = "CUDA_DRIVER_API" if fn.startswith("cu") and \
                                    not fn.startswith("cuda") else "CUDA_RUNTIME_API"
                                b.region(cat, fn, launch, launch + rng.randrange(3_000, 9_000),
                                         tid=tid, correlation_id=corr, site=site,
                                         range_corr=rng_corr if tid == pid else 0)
                                break
                    grid, block = shapes[k]
                    start = launch + rng.randrange(5_000, 40_000)
                    b.kernel(names[k], start, start + rng.randrange(2_000, 60_000), tid=tid,
                             correlation_id=corr, grid=grid, block=block, stream=7,
                             range_corr=rng_corr if tid == pid else 0, site=site)
                    if rng.random() < 0.12:
                        c = b.next_correlation()
                        b.memory_copy("MEMORY_SET" if rng.random() < 0.7 else
                                      "MEMORY_COPY_HOST_TO_DEVICE", start + 100, start + 3_000,
                                      4096 * rng.randrange(1, 256), tid=tid, correlation_id=c,
                                      stream=7, site=site, memset=rng.random() < 0.7)
                    t += 40_000
            t += 1_000_000
        b.close(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=130)
    ap.add_argument("--sys-trace", action="store_true")
    ap.add_argument("--keep", help="folder to keep the database in")
    ap.add_argument("--no-vacuum", action="store_true", help="skip the VACUUM what-ifs")
    a = ap.parse_args()
    folder = a.keep or tempfile.mkdtemp(prefix="b5-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"transformer_{'systrace' if a.sys_trace else 'default'}.db")
    if os.path.exists(path):
        os.remove(path)
    build(path, a.steps, a.sys_trace)
    gpu_b5_bytes.report(path, vacuum=not a.no_vacuum)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
