"""Pairs of training runs for `rocpd diff`, written by the real writer (rocpd.testing.DatabaseBuilder).

Each run is a small training loop simulated on one host thread and one GPU stream: per step a
batch upload (train.py:38), a forward pass of four kernels (model.py:21-24), a backward pass
(launched from the ``loss.backward()`` line, train.py:44), an optimizer kernel (train.py:47) and
``loss.item()`` (train.py:50: a copy to the host that the host waits for). The host queues
launches (5 µs each, 8 µs launch latency) far ahead of the GPU; the GPU runs them back to back.
Every duration carries +-3 % noise from ``seed``. ROCTx ranges: "train_step" per step, with
"data", "forward", "backward" and "optimizer" inside.

The planted changes (keyword arguments of :func:`run`): ``slow`` (kernel -> factor), ``sync_after``
(a ``torch.cuda.synchronize()`` at model.py:26 after that kernel), ``pageable`` (the upload from
pageable memory: slower, and the host waits for it), ``extra`` (one more kernel per step,
model.py:27), ``vendor="amd"`` (the same program on an AMD GPU: HIP API names, other GEMM names).
The host's own pace (not a change of the program): ``host_us``, its work at each step's start
before the first launch (Python building the batch: the GPU idles meanwhile), bursty as a host
is (a few µs of spread, and now and then a pause of a few hundred µs: a collection, the OS);
``pauses`` ({step: µs}): longer host pauses at those steps' start (the heavy tail of a host's
pace: the GPU idles for a millisecond in a few steps of one run, in none of the other's);
``scale`` stretches every GPU duration (longer steps).
"""

from __future__ import annotations

import os
import random

from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent

T0 = 1_000_000_000_000
TRAIN = "/home/user/proj/train.py"
MODEL = "/home/user/proj/model.py"
NV_GEMM = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_kernel"
AMD_GEMM = "Cijk_Alik_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_AFC1_GRVW4_WG32_4_1"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::relu_functor<float>>(int, float*)"
# (name, line, µs): GEMMs take the vendor's GEMM name with the suffix as a tile hint.
FORWARD = [("gemm_in", 21, 300.0), ("relu", 22, 20.0), ("gemm_out", 23, 250.0), ("softmax", 24, 30.0)]
BACKWARD = [("softmax_backward", 44, 30.0), ("gemm_out_dgrad", 44, 260.0), ("gemm_out_wgrad", 44, 240.0),
            ("relu_backward", 44, 25.0), ("gemm_in_wgrad", 44, 280.0)]
LINES = {"upload": (TRAIN, 38, "train_step"), "backward": (TRAIN, 44, "train_step"),
         "optimizer": (TRAIN, 47, "train_step"), "item": (TRAIN, 50, "train_step"),
         "sync": (MODEL, 26, "forward"), "extra": (MODEL, 27, "forward"),
         "allreduce": (TRAIN, 45, "train_step")}
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
US = 1_000


def kernel_name(name: str, vendor: str) -> str:
    if name.startswith("gemm"):
        return f"{NV_GEMM if vendor == 'nvidia' else AMD_GEMM}_{name}"
    if name == "relu":
        return RELU
    return f"{name}_kernel"


class Sim:
    """One host thread and one GPU stream: times in ns, ops written as they are simulated."""

    def __init__(self, b, rng, vendor, scale=1.0, t0=T0):
        self.b, self.rng, self.vendor, self.scale = b, rng, vendor, scale
        self.h = self.g = t0
        self.api = "CUDA_RUNTIME_API" if vendor == "nvidia" else "HIP_RUNTIME_API"
        self.prefix = "cuda" if vendor == "nvidia" else "hip"

    def noisy(self, us: float) -> int:
        return int(us * US * self.rng.uniform(0.97, 1.03))

    def _call(self, name, start, end, site, corr=0):
        self.b.region(self.api, self.prefix + name, start, end, correlation_id=corr or None,
                      site=site)

    def kernel(self, name, us, site, end_at=None):
        corr = self.b.next_correlation()
        a0 = self.h
        a1 = a0 + self.noisy(5)
        k0 = max(self.g, a0 + 8 * US)
        k1 = end_at if end_at is not None else k0 + self.noisy(us * self.scale)
        self._call("LaunchKernel", a0, a1, site, corr)
        self.b.kernel(kernel_name(name, self.vendor) if name != ALLREDUCE else name, k0, k1,
                      correlation_id=corr, site=site)
        self.g, self.h = k1, a1 + self.noisy(3)
        return k0

    def upload(self, pageable: bool, site):
        corr = self.b.next_correlation()
        a0 = self.h
        c0 = max(self.g, a0 + 8 * US)
        c1 = c0 + self.noisy((144 if pageable else 80) * self.scale)
        a1 = c1 + 2 * US if pageable else a0 + self.noisy(5)  # pageable: the host waits for it
        self._call("MemcpyAsync", a0, a1, site, corr)
        self.b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", c0, c1, 8 << 20, src_agent=CPU_AGENT,
                           dst_agent=gpu_agent(0), correlation_id=corr, site=site,
                           src_memory="PAGEABLE" if pageable else "PINNED", dst_memory="DEVICE")
        self.g, self.h = c1, a1 + self.noisy(3)

    def host_work(self, us: float):
        """The host busy for ``us`` (+-10 %), one step in ten also paused for 100-400 µs."""
        if not us:
            return  # draws nothing: the other runs' noise stays as it was
        pause = self.rng.uniform(100, 400) if self.rng.random() < 0.1 else 0.0
        self.h += int((us * self.rng.uniform(0.9, 1.1) + pause) * US)

    def sync(self, site):
        a0 = self.h
        a1 = max(a0, self.g) + self.noisy(2)
        self._call("DeviceSynchronize", a0, a1, site)
        self.h = a1 + self.noisy(3)

    def item(self, site):
        corr = self.b.next_correlation()
        a0 = self.h
        c0 = max(self.g, a0 + 8 * US)
        c1 = c0 + self.noisy(3)
        a1 = c1 + self.noisy(2)
        self._call("MemcpyAsync", a0, a1, site, corr)
        self.b.memory_copy("MEMORY_COPY_DEVICE_TO_HOST", c0, c1, 4, src_agent=gpu_agent(0),
                           dst_agent=CPU_AGENT, correlation_id=corr, site=site,
                           src_memory="DEVICE", dst_memory="PAGEABLE")
        self.g, self.h = c1, a1 + self.noisy(3)


def _forward(sim, slow, sync_after, extra):
    for name, line, us in FORWARD:
        sim.kernel(name, us * slow.get(name, 1.0), (MODEL, line, "forward"))
        if name == sync_after:
            sim.sync(LINES["sync"])
    if extra:
        sim.kernel("bias_add", 40.0, LINES["extra"])


def _backward(sim, slow):
    for name, _, us in BACKWARD:
        sim.kernel(name, us * slow.get(name, 1.0), LINES["backward"])


def run(path, seed=0, steps=30, slow=None, sync_after=None, pageable=False, extra=False,
        vendor="nvidia", pid=1000, host_us=0.0, scale=1.0, pauses=None, t0=T0):
    """One run (see the module's text), starting at ``t0`` (runs recorded one after the other
    start apart); returns ``path``."""
    slow = slow or {}
    if os.path.exists(path):
        os.unlink(path)
    with DatabaseBuilder(path, pid=pid) as b:
        sim = Sim(b, random.Random(seed), vendor, scale, t0)
        for step in range(steps):
            s0 = sim.h
            sim.host_work(host_us)
            sim.h += int((pauses or {}).get(step, 0.0) * US)
            spans = {}
            t = sim.h
            sim.upload(pageable, LINES["upload"])
            spans["data"] = (t, sim.h)
            t = sim.h
            _forward(sim, slow, sync_after, extra)
            spans["forward"] = (t, sim.h)
            t = sim.h
            _backward(sim, slow)
            spans["backward"] = (t, sim.h)
            t = sim.h
            sim.kernel("adam_update", 60.0, LINES["optimizer"])
            spans["optimizer"] = (t, sim.h)
            sim.item(LINES["item"])
            b.marker("train_step", s0, sim.h + 1 * US)
            for name, (a, e) in spans.items():
                b.marker(name, a, e)
            sim.h += sim.noisy(10)
    return path


def pair(tmp_path, name="pair", **planted):
    """(A, B): A the baseline, B the same program with ``planted`` changes, other noise."""
    a = run(tmp_path / f"{name}_a.db", seed=1)
    b = run(tmp_path / f"{name}_b.db", seed=2, **planted)
    return str(a), str(b)


def ranks(folder, n=4, seed=0, steps=20, slow_rank=None, factor=1.5):
    """A synchronous data-parallel run, one database per rank: each step, the forward and
    backward kernels, then an all-reduce (train.py:45) that ends on every rank when the slowest
    rank's backward is done plus 100 µs; ``slow_rank``'s gemm_out ``factor`` times longer."""
    folder.mkdir(parents=True, exist_ok=True)
    builders, sims, paths = [], [], []
    for r in range(n):
        path = folder / f"rank{r}_results.db"
        if path.exists():
            path.unlink()
        b = DatabaseBuilder(path, pid=5000 + r, rank=r)
        builders.append(b)
        sims.append(Sim(b, random.Random(seed * 100 + r), "nvidia"))
        paths.append(str(path))
    for _ in range(steps):
        starts = [s.h for s in sims]
        for r, sim in enumerate(sims):
            slow = {"gemm_out": factor} if r == slow_rank else {}
            sim.upload(False, LINES["upload"])
            _forward(sim, slow, None, False)
            _backward(sim, slow)
        ready = max(max(s.g, s.h + 8 * US) for s in sims)
        for sim in sims:
            sim.kernel(ALLREDUCE, 0, LINES["allreduce"], end_at=ready + 100 * US)
        for r, sim in enumerate(sims):
            sim.kernel("adam_update", 60.0, LINES["optimizer"])
            sim.item(LINES["item"])
            builders[r].marker("train_step", starts[r], sim.h + US)
            sim.h += sim.noisy(10)
        top = max(s.h for s in sims)
        for sim in sims:  # the next step starts together (the all-reduce synchronises them)
            sim.h = top
    for b in builders:
        b.close()
    return paths


def repeats(folder, name, host_us, seed=0, after_s=0, **planted):
    """Runs of one program recorded one after the other (each starts 10 s after the last, the
    first ``after_s`` seconds after T0), run i with ``host_us[i]`` of the host's own work per
    step (the host's pace, which moves from run to run) and ``planted`` changes; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    return [str(run(folder / f"{name}{i + 1}.db", seed=seed + i, host_us=h, scale=3.0,
                    t0=T0 + (after_s + i * 10) * 1_000_000_000, **planted))
            for i, h in enumerate(host_us)]
