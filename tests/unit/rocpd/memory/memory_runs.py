"""Test databases with GPU memory records as the capture writes them (rocpd.testing.memory): a
training loop with a planted leak, a planted 1 GiB temporary, an out-of-memory, a segment with
known free holes. Each returns what was planted, for the tests to check figures against."""

from __future__ import annotations

from rocpd.testing import DatabaseBuilder
from rocpd.testing.builder import gpu_agent
from rocpd.testing.memory import AllocatorTrace

MiB, GiB = 1 << 20, 1 << 30
FILE = "/home/u/train.py"
BASE = 0x7F00_0000_0000
STEP_NS = 10_000_000
T0 = 1_000_000_000

PARAM_LINE = (FILE, 10, "main")
ACT_LINE = (FILE, 21, "forward")
GRAD_LINE = (FILE, 21, "forward", "aten::mm")  # backward work, named by its forward op
LEAK_LINE = (FILE, 30, "train_step")
PEAK_LINE = (FILE, 40, "train_step")
OOM_LINE = (FILE, 50, "grow")


def training(path, steps=10, leak=4 * MiB, peak_step=None, temp=GiB, gpus=1, skip_leak_at=(),
             unmatched_free=False):
    """A loop of ``steps`` ROCTx "step" ranges, each with a kernel, activations (ACT_LINE, freed
    in the step), gradients (GRAD_LINE, backward), and ``leak`` bytes kept forever (LEAK_LINE;
    0: none, none either in steps of ``skip_leak_at``); at ``peak_step`` a ``temp`` temporary
    (PEAK_LINE) freed right after. Parameters (PARAM_LINE, 64 MiB) live throughout. Every GPU
    of ``gpus`` runs the same, GPU g's leak being (g + 1) x ``leak``."""
    b = DatabaseBuilder(path, gpus=gpus)
    m = AllocatorTrace(b)
    facts = {"steps": steps, "leak": leak, "peaks": {}, "reserved": {}, "driver": {}}
    for g in range(gpus):
        agent = gpu_agent(g)
        base = BASE + g * (1 << 40)
        seg = 2 * GiB if peak_step is not None else 512 * MiB
        m.segment(T0 + g, base, seg, agent=agent)
        m.real(T0 + 100 + g, base + (1 << 39), 32 * MiB, agent=agent)  # NCCL-like buffer
        m.block(T0 + 10 + g, base, 64 * MiB, site=PARAM_LINE, agent=agent)
        facts["reserved"][g] = seg
        facts["driver"][g] = seg + 32 * MiB
    live = {g: 64 * MiB for g in range(gpus)}
    peak = dict(live)
    if unmatched_free:
        m.block(T0 + 50, BASE + GiB + GiB // 2, 4 * MiB, free=True)
    for k in range(steps):
        s = T0 + 1_000_000 + k * STEP_NS
        b.marker("step", s, s + STEP_NS - 1000)
        b.kernel("gemm", s + 1000, s + 5000, site=ACT_LINE)
        for g in range(gpus):
            agent = gpu_agent(g)
            base = BASE + g * (1 << 40)
            act, grad = base + 64 * MiB, base + 96 * MiB
            m.block(s + 100, act, 16 * MiB, site=ACT_LINE, agent=agent)
            m.block(s + 200, grad, 8 * MiB, site=GRAD_LINE, agent=agent)
            peak[g] = max(peak[g], live[g] + 24 * MiB)
            m.block(s + 300, act, 16 * MiB, free=True, agent=agent)
            m.block(s + 400, grad, 8 * MiB, free=True, agent=agent)
            lk = leak * (g + 1)
            if lk and k not in skip_leak_at:
                m.block(s + 500, base + 128 * MiB + k * lk, lk, site=LEAK_LINE, agent=agent)
                live[g] += lk
                peak[g] = max(peak[g], live[g])
            if k == peak_step:
                tmp = base + GiB
                m.block(s + 600, tmp, temp, site=PEAK_LINE, agent=agent)
                peak[g] = max(peak[g], live[g] + temp)
                m.block(s + 700, tmp, temp, free=True, agent=agent)
    facts["peaks"] = peak
    facts["end"] = live
    m.close(T0 + 1_000_000 + steps * STEP_NS + 1000)
    return facts


def out_of_memory(path, chunk=4 * GiB, chunks=3, device_free=2 * GiB):
    """Allocations of ``chunk`` at OOM_LINE (one segment each) until a request of ``chunk``
    fails: an OOM row with ``device_free``; the database is then closed as the session ends."""
    b = DatabaseBuilder(path)
    m = AllocatorTrace(b)
    for k in range(chunks):
        s = T0 + k * 1_000_000
        b.marker("step", s, s + 900_000)
        a = BASE + k * chunk
        m.segment(s + 10, a, chunk)
        m.block(s + 20, a, chunk, site=OOM_LINE)
    t = T0 + chunks * 1_000_000
    b.marker("step", t, t + 900_000)
    m.oom(t + 10, chunk, device_free=device_free, site=OOM_LINE)
    m.close(t + 1_000_000)
    return {"chunk": chunk, "chunks": chunks, "device_free": device_free}


def holes(path):
    """One 100 MiB segment with blocks at [0, 10), [20, 30), [45, 50) MiB, and a second segment
    mapped right after it (expandable segments: 20 MiB, touching) with a block at its
    [10, 20): free holes of 10, 15 and 60 MiB ([50, 110), across the two pieces); the peak is
    the moment the last block is handed out."""
    b = DatabaseBuilder(path)
    m = AllocatorTrace(b)
    m.segment(T0, BASE, 100 * MiB)
    m.segment(T0 + 1, BASE + 100 * MiB, 20 * MiB)
    for i, (lo, hi) in enumerate(((0, 10), (20, 30), (45, 50), (110, 120))):
        m.block(T0 + 10 + i, BASE + lo * MiB, (hi - lo) * MiB, site=(FILE, 60 + i, "build"))
    m.close(T0 + 1000)
    return {"allocated": 35 * MiB, "reserved": 120 * MiB, "largest": 60 * MiB, "free": 85 * MiB,
            "segments": 2}


def plain(path):
    """A run with kernels and a step range but no GPU memory records."""
    with DatabaseBuilder(path) as b:
        for k in range(3):
            s = T0 + k * STEP_NS
            b.marker("step", s, s + STEP_NS - 1000)
            b.kernel("gemm", s + 100, s + 5000)


def driver_only(path):
    """Runtime allocations only (no allocator events: torch without a CUDA allocator)."""
    b = DatabaseBuilder(path)
    m = AllocatorTrace(b, source="none: torch has no CUDA allocator")
    m.real(T0 + 1000, BASE, 256 * MiB)
    m.real(T0 + 2000, BASE + GiB, 128 * MiB)
    m.real(T0 + 3000, BASE, 256 * MiB, free=True)
    m.close(T0 + 10_000)
    return {"driver_peak": 384 * MiB}


def split(path):
    """One 100 MiB segment holding ten 5 MiB blocks, one every 10 MiB: half of it free, in ten
    holes of 5 MiB (fragmentation: the largest free block is a tenth of the free space)."""
    b = DatabaseBuilder(path)
    m = AllocatorTrace(b)
    m.segment(T0, BASE, 100 * MiB)
    for i in range(10):
        m.block(T0 + 10 + i, BASE + 10 * i * MiB, 5 * MiB, site=(FILE, 80, "build"))
    m.close(T0 + 1000)
    return {"largest": 5 * MiB, "free": 50 * MiB}
