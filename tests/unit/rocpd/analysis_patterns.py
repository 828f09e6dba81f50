"""Small databases with (and without) the patterns the findings look for, written by the real
writer (rocpd.testing.DatabaseBuilder). Times are given in µs from ``T0`` and stored in ns; the
API names are the CUPTI mapping's (cudaLaunchKernel, cudaMemcpyAsync, cudaDeviceSynchronize ...,
category CUDA_RUNTIME_API), copies are named as the mapping names them."""

from __future__ import annotations

from rocpd.testing import DatabaseBuilder

T0 = 1_000_000_000
US = 1_000
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def ns(us: float) -> int:
    return T0 + int(round(us * US))


def launch(b, name, api_at, api_us, gpu_at, gpu_us, site=None, stream=0, tid=None,
           api="cudaLaunchKernel"):
    """A kernel launched by an API call (same correlation id); ``site`` = (file, line, function)."""
    corr = b.next_correlation()
    b.region("CUDA_RUNTIME_API", api, ns(api_at), ns(api_at + api_us), tid=tid,
             correlation_id=corr, site=site)
    b.kernel(name, ns(gpu_at), ns(gpu_at + gpu_us), correlation_id=corr, stream=stream, tid=tid,
             site=site)
    return corr


def copy(b, direction, api_at, api_us, gpu_at, gpu_us, size=1 << 20, site=None, src_memory="",
         dst_memory="", api="cudaMemcpyAsync", stream=0):
    names = {"H2D": "MEMORY_COPY_HOST_TO_DEVICE", "D2H": "MEMORY_COPY_DEVICE_TO_HOST",
             "D2D": "MEMORY_COPY_DEVICE_TO_DEVICE"}
    corr = b.next_correlation()
    b.region("CUDA_RUNTIME_API", api, ns(api_at), ns(api_at + api_us), correlation_id=corr, site=site)
    from rocpd.testing import CPU_AGENT, gpu_agent

    src = CPU_AGENT if direction == "H2D" else gpu_agent(0)
    dst = CPU_AGENT if direction == "D2H" else gpu_agent(0)
    b.memory_copy(names[direction], ns(gpu_at), ns(gpu_at + gpu_us), size, src_agent=src,
                  dst_agent=dst, correlation_id=corr, site=site, src_memory=src_memory,
                  dst_memory=dst_memory, stream=stream)
    return corr


def sync(b, at, dur_us, site=None, name="cudaDeviceSynchronize"):
    b.region("CUDA_RUNTIME_API", name, ns(at), ns(at + dur_us), site=site)


# ---- loops: `steps` steps of `period` µs, each with the given body ------------------------------
def launch_bound(path, steps=4, kernels=20):
    """Tiny kernels (2 µs) each launched 10 µs after the previous: the GPU waits for the host."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 220.0
            b.marker("step", ns(at), ns(at + 210))
            for i in range(kernels):
                a = at + 5 + i * 10
                launch(b, "vectorized_elementwise_kernel", a, 5, a + 7, 2, site=("/w/train.py", 41, "step"))
    return path


def gpu_bound(path, steps=4, kernels=20):
    """The host queues long kernels far ahead: the GPU runs them back to back."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 2100.0
            b.marker("step", ns(at), ns(at + 2090))
            for i in range(kernels):
                launch(b, "gemm_kernel", at + 1 + i * 6, 5, at + 20 + i * 100, 99.5,
                       site=("/w/model.py", 12, "forward"))
    return path


def host_bound(path, steps=4, kernels=10):
    """Long kernels (50 µs), but the host launches one only every 200 µs."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 2100.0
            b.marker("step", ns(at), ns(at + 2050))
            for i in range(kernels):
                a = at + 5 + i * 200
                launch(b, "gemm_kernel", a, 5, a + 8, 50, site=("/w/train.py", 30, "step"))
    return path


def sync_after_launch(path, steps=4, kernels=10):
    """torch.cuda.synchronize() after every launch (train.py:42)."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 1000.0
            b.marker("step", ns(at), ns(at + 950))
            for i in range(kernels):
                a = at + 5 + i * 90
                launch(b, "gemm_kernel", a, 5, a + 8, 40, site=("/w/train.py", 41, "step"))
                sync(b, a + 6, 43, site=("/w/train.py", 42, "step"))  # returns at a + 49
    return path


def copy_to_host(path, steps=4):
    """loss.item() at the end of each step: a D2H copy the host waits for, then idle."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 1000.0
            b.marker("step", ns(at), ns(at + 990))
            for i in range(4):
                launch(b, "gemm_kernel", at + 2 + i * 6, 5, at + 20 + i * 100, 99, site=("/w/train.py", 50, "step"))
            # the host waits in the copy until it is done, then logs for a while (the GPU idles)
            copy(b, "D2H", at + 30, 395, at + 420, 4, size=4, site=("/w/train.py", 55, "step"),
                 src_memory="DEVICE", dst_memory="PAGEABLE")
    return path


def h2d_copies(path, src_memory="PAGEABLE", blocking=True, steps=4):
    """Each step uploads its batch (200 µs of copy), then runs one kernel."""
    with DatabaseBuilder(path) as b:
        for s in range(steps):
            at = s * 1000.0
            b.marker("step", ns(at), ns(at + 950))
            api_us = 205 if blocking else 4
            copy(b, "H2D", at + 5, api_us, at + 8, 200, size=64 << 20, site=("/w/train.py", 20, "step"),
                 src_memory=src_memory, dst_memory="DEVICE" if src_memory else "")
            launch(b, "gemm_kernel", at + 215, 5, at + 222, 700, site=("/w/train.py", 21, "step"))
    return path


def ranks(tmp_path, comm_us=(300, 300), compute_us=(600, 600), overlap=False, steps=3):
    """One database per rank: compute then (or, ``overlap``, alongside on stream 1) an NCCL
    all-reduce each step."""
    paths = []
    period = max(cp + (0 if overlap else cm) for cm, cp in zip(comm_us, compute_us, strict=True)) + 30
    for r, (cm, cp) in enumerate(zip(comm_us, compute_us, strict=True)):
        path = tmp_path / f"rank{r}.db"
        with DatabaseBuilder(path, pid=2000 + r, rank=r) as b:
            for s in range(steps):
                at = s * float(period)
                b.marker("step", ns(at), ns(at + period - 5))
                launch(b, "gemm_kernel", at + 1, 5, at + 10, cp, site=("/w/train.py", 60, "step"))
                start = at + 10 + (0 if overlap else cp)
                launch(b, NCCL, at + 7, 5, start, cm, stream=1, site=("/w/train.py", 61, "step"))
        paths.append(str(path))
    return paths
