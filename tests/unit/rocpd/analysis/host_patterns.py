"""Loops whose GPU waits for the host, each written twice: as `rocprof run`'s default trace
records it (kernels and copies with their Python launch sites, ROCTx ranges; no API calls) and
as `--sys-trace` records it through CUPTI (cpp/capture/cupti/cupti_records.cpp):
- every runtime call a CUDA_RUNTIME_API region, with the Python call site that its ENTER
  callback captured (launches, copies, synchronisations); the kernel or copy it caused carries
  the same correlation id;
- the driver call that the runtime call makes, a CUDA_DRIVER_API region nested inside it with
  a correlation id of its own and the same call site;
- a synchronisation (cudaDeviceSynchronize, cudaStreamSynchronize) also a CUDA_SYNCHRONIZATION
  region (CONTEXT_/STREAM_SYNCHRONIZE) over the wait, with the runtime call's correlation id
  and no call site;
- a copy from pageable memory blocks the host for the copy (its memory kinds are recorded).
Optionally, ``samples``: call-stack samples every 1 ms on the main thread, as ``--sample``
takes them. Times in µs from analysis_patterns.T0."""

from __future__ import annotations

from analysis_patterns import ns

from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent

SCRIPT = "/w/train.py"
LOADER = "/w/data.py"
MODEL = "/w/model.py"
LINE = {"create": 12, "upload": 30, "forward": 31, "item": 33, "sync": 42, "load": 8, "loop": 28}


class Trace:
    """Writes one loop into ``b`` as the default trace (``api=False``) or --sys-trace records it."""

    def __init__(self, b: DatabaseBuilder, api: bool, samples: bool = False):
        self.b, self.api, self.samples = b, api, samples

    def _runtime(self, name, at, dur, site, corr=None, driver=None):
        if not self.api:
            return
        corr = corr or self.b.next_correlation()
        self.b.region("CUDA_RUNTIME_API", name, ns(at), ns(at + dur), correlation_id=corr, site=site)
        if driver:
            self.b.region("CUDA_DRIVER_API", driver, ns(at + 0.5), ns(at + dur - 0.5),
                          correlation_id=self.b.next_correlation(), site=site)
        return corr

    def launch(self, name, at, gpu_at, gpu_us, line, file=SCRIPT, fn="step"):
        """A launch call of 5 µs at ``at``; the kernel runs [gpu_at, gpu_at + gpu_us)."""
        site = (file, LINE[line] if isinstance(line, str) else line, fn)
        corr = self.b.next_correlation()
        if self.api:
            self._runtime("cudaLaunchKernel", at, 5, site, corr=corr, driver="cuLaunchKernel")
        self.b.kernel(name, ns(gpu_at), ns(gpu_at + gpu_us), correlation_id=corr, site=site)

    def copy(self, direction, at, api_us, gpu_at, gpu_us, line, size=1 << 20, file=SCRIPT,
             fn="step"):
        site = (file, LINE[line] if isinstance(line, str) else line, fn)
        corr = self.b.next_correlation()
        if self.api:
            self._runtime("cudaMemcpyAsync", at, api_us, site, corr=corr, driver="cuMemcpyAsync")
        names = {"H2D": "MEMORY_COPY_HOST_TO_DEVICE", "D2H": "MEMORY_COPY_DEVICE_TO_HOST"}
        src, dst = (CPU_AGENT, gpu_agent(0)) if direction == "H2D" else (gpu_agent(0), CPU_AGENT)
        self.b.memory_copy(names[direction], ns(gpu_at), ns(gpu_at + gpu_us), size,
                           src_agent=src, dst_agent=dst, correlation_id=corr, site=site,
                           src_memory="PAGEABLE" if direction == "H2D" else "DEVICE",
                           dst_memory="DEVICE" if direction == "H2D" else "PAGEABLE")

    def sync(self, at, until, line, stream=False, file=SCRIPT, fn="step"):
        """The host waits in a synchronisation [at, until)."""
        if not self.api:
            return
        site = (file, LINE[line] if isinstance(line, str) else line, fn)
        name, drv, rec = (("cudaStreamSynchronize", "cuStreamSynchronize", "STREAM_SYNCHRONIZE")
                          if stream else ("cudaDeviceSynchronize", "cuCtxSynchronize",
                                          "CONTEXT_SYNCHRONIZE"))
        corr = self._runtime(name, at, until - at, site, driver=drv)
        self.b.region("CUDA_SYNCHRONIZATION", rec, ns(at + 1), ns(until - 1), correlation_id=corr)

    def host(self, t0, t1, *frames):
        """Samples (when on) every 1 ms in [t0, t1) with the given frames, outermost first."""
        if not self.samples:
            return
        t = t0 + 500
        while t < t1:
            self.b.sample(None, ns(t), call_stack=list(frames))
            t += 1000


def _model_creation(t: Trace, at: float = 0.0) -> float:
    """Weights uploaded from pageable memory at model.py:12, then torch.cuda.synchronize()
    there: returns when the host is done."""
    for i in range(4):
        a = at + i * 300
        t.copy("H2D", a, 290, a + 10, 270, "create", size=8 << 20, file=MODEL, fn="__init__")
    t.sync(at + 1200, at + 1210, "create", file=MODEL, fn="__init__")
    return at + 1210


def _item(t: Trace, at: float, gpu_end: float) -> float:
    """loss.item() at ``at`` with the GPU busy until ``gpu_end``: a D2H copy of 4 bytes, then
    the stream synchronisation the host waits in; returns when it returns."""
    t.copy("D2H", at, 4, gpu_end, 2, "item", size=4)
    t.sync(at + 5, gpu_end + 5, "item", stream=True)
    return gpu_end + 5


def slow_loader(path, api: bool, samples: bool = False, steps: int = 6, load_us: float = 20_000):
    """for batch in loader: with roctx.range("step"): upload, 10 kernels, loss.item(). The
    loader (data.py:8, time.sleep) takes ``load_us`` per batch, outside the step range: the GPU
    (1 ms of work per step) idles about 95 % of the time, waiting for the host between steps."""
    with DatabaseBuilder(path) as b:
        t = Trace(b, api, samples)
        now = _model_creation(t)
        for _ in range(steps):
            t.host(now, now + load_us, ("<module>", SCRIPT, LINE["loop"]), ("load", LOADER, LINE["load"]))
            now += load_us
            start = now
            t.copy("H2D", now + 2, 110, now + 10, 100, "upload")  # pageable: the host waits
            now += 115
            gpu = now + 8
            for _k in range(10):
                t.launch("gemm_kernel", now, gpu, 95, "forward")
                now += 8
                gpu += 100
            now = _item(t, now + 2, gpu)
            b.marker("step", ns(start), ns(now + 3))
            now += 10
    return path


def sync_in_step(path, api: bool, steps: int = 4, ops: int = 20, kernel_us: float = 3.0):
    """torch.cuda.synchronize() after every op of the step (train.py:42), as planted.py plants
    it: a launch, the kernel, the wait, 12 µs of Python to the next launch."""
    with DatabaseBuilder(path) as b:
        t = Trace(b, api)
        now = 100.0
        for _ in range(steps):
            start = now
            for _k in range(ops):
                t.launch("elementwise_kernel", now, now + 6, kernel_us, "forward")
                ret = max(now + 12, now + 6 + kernel_us + 3)
                t.sync(now + 6, ret, "sync")
                now = ret + 12
            b.marker("step", ns(start), ns(now))
            now += 5
    return path


def startup(path, api: bool, steps: int = 5, init_us: float = 40_000):
    """Model creation with its synchronisation, ``init_us`` of host start-up (building the data
    set) and then launch-bound steps: 20 kernels of 2 µs, one launched every 10 µs."""
    with DatabaseBuilder(path) as b:
        t = Trace(b, api)
        now = _model_creation(t) + init_us
        for _ in range(steps):
            start = now
            for _k in range(20):
                t.launch("vectorized_elementwise_kernel", now + 5, now + 12, 2, "forward")
                now += 10
            b.marker("step", ns(start), ns(now + 10))
            now += 20
    return path
