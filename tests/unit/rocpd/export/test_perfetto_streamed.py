"""The Perfetto trace with its kernels streamed (rocpd.export._perfetto_gpu, two passes over
SQLite, merged with the held events by rocpd.export._perfetto_merge) against the trace written
with every record held (``stream=False``, the writer as it was), byte for byte, on databases
written by the real writer: kernels on two GPUs and three streams, launched by API calls (flows)
inside ROCTx ranges, marks, samples, allocations and counter values, equal instants across
tracks and a kernel ending where the next starts; chunks of 1, 7 and all kernels; filters; the
buffer budget; copies among the kernels; kernel-name filters; queues as lanes (streams sharing
a queue overlap on its track); slices that overlap on a stream (lanes); several files, a
file's kernels streamed each. A part given twice goes to the held writer."""

from __future__ import annotations

import random
import shutil

import pytest

import rocpd
from rocpd.export import _perfetto_gpu, _perfetto_merge, _perfetto_regions, perfetto
from rocpd.testing import DatabaseBuilder, gpu_agent

pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                    reason="the 'perfetto' package is not installed")


def _write_db(path, seed, pid=1000, overlap=False, copies=False):
    rng = random.Random(seed)
    with DatabaseBuilder(path, pid=pid, gpus=2) as b:
        t = 1_000_000
        ends: dict = {}
        b.marker("step", t, t + 3_000_000)
        b.marker("mark", t + 5_000, t + 5_000)
        for i in range(400):
            agent, stream = rng.choice([(0, 0), (0, 1), (1, 2)])
            start = max(ends.get(stream, 0), t + rng.choice([0, 0, 1_000, 4_000]))
            if overlap and i == 200:
                start -= 500  # overlaps the kernel before on its stream
            end = start + rng.choice([0, 2_000, 7_000]) if i % 50 else start + 1
            ends[stream] = end + rng.choice([0, 0, 300])
            if rng.random() < 0.8:
                corr = b.next_correlation()
                b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", start - 3_000, start - 1_000,
                         correlation_id=corr)
                b.kernel(f"k{i % 7}", start, end, agent=gpu_agent(agent), stream=stream,
                         correlation_id=corr, queue=stream % 2)
            else:
                b.kernel("solo", start, end, agent=gpu_agent(agent), stream=stream)
            if i % 40 == 0:
                b.allocation("ALLOC", start, start + 10, 4096 * (i + 1), address=4096 * i)
                b.sample(None, start + 3, call_stack=["main", f"f{i % 3}"])
            if copies and i % 100 == 0:
                b.memory_copy("CopyHostToDevice", start, start + 500, 1024, stream=7)  # tie
            t = start + rng.randrange(0, 5_000)
        if overlap:  # on a stream of their own: nesting with a shared end, two starting
            # together (the longer, stored second, first), lanes 1 and 2, a zero-length slice, ends at starts
            base = t + 100_000
            for i, (s, e) in enumerate([(0, 1000), (100, 500), (100, 1000), (200, 1500),
                                        (300, 1600), (1000, 1000), (1600, 1700), (1600, 1650),
                                        (1650, 1800), (5000, 6000)]):
                b.kernel(f"n{i}", base + s, base + e, stream=5)
    return str(path)


@pytest.fixture(autouse=True)
def _regions_streamed(monkeypatch):
    monkeypatch.setattr(_perfetto_regions, "STREAM_ABOVE", 0)  # streamed however few


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    d = tmp_path_factory.mktemp("perfetto_streamed")
    return {"plain": _write_db(d / "a.db", 1), "other": _write_db(d / "b.db", 2, pid=2000),
            "overlap": _write_db(d / "c.db", 3, overlap=True),
            "copies": _write_db(d / "d.db", 4, copies=True)}


def _both(paths, tmp_path, monkeypatch, **kw):
    if "kernel_include" in kw or "kernel_exclude" in kw:
        kw = {k.replace("kernel_", ""): v for k, v in kw.items()}
    """(streamed bytes, held bytes, whether the kernels were streamed)."""
    used = []
    real = _perfetto_gpu.GpuStream.windows

    def windows(self, part):
        used.append(type(self).__name__)
        yield from real(self, part)

    monkeypatch.setattr(_perfetto_gpu.GpuStream, "windows", windows)
    out = []
    for stream in (True, False):
        path = tmp_path / f"t{stream}.pftrace"
        with rocpd.connect(*paths) as db:
            perfetto.write(db, str(path), stream=stream, **kw)
        out.append(path.read_bytes())
    return out[0], out[1], used


@pytest.mark.parametrize("which", ["plain", "copies", "overlap"])
@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_streamed_as_held(dbs, tmp_path, monkeypatch, chunk, which):
    monkeypatch.setattr(_perfetto_gpu, "CHUNK", chunk)
    monkeypatch.setattr(_perfetto_merge, "ENCODE", 5)
    streamed, held, used = _both([dbs[which]], tmp_path, monkeypatch)
    assert set(used) == {"GpuStream", "RegionStream"} and len(held) > 20_000
    assert streamed == held


@pytest.mark.parametrize("kw", [dict(start="10%", end="60%"), dict(pid=1000),
                                dict(buffer_size_kb=20), dict(buffer_size_kb=20,
                                                              buffer_fill_policy="ring_buffer"),
                                dict(agent_index="absolute"), dict(kernel_include="k[12]"),
                                dict(kernel_exclude="solo|k3"), dict(group_by_queue=True)])
def test_streamed_as_held_with_options(dbs, tmp_path, monkeypatch, kw):
    streamed, held, used = _both([dbs["plain"]], tmp_path, monkeypatch, **kw)
    assert used
    assert streamed == held


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_files_streamed_each_as_held(dbs, tmp_path, monkeypatch, chunk):
    # two processes' files, their kernels interleaved in time, and a third with overlaps
    monkeypatch.setattr(_perfetto_gpu, "CHUNK", chunk)
    paths = [dbs["plain"], dbs["other"], dbs["overlap"]]
    streamed, held, used = _both(paths, tmp_path, monkeypatch)
    assert used
    assert streamed == held


def test_a_part_given_twice_is_held(dbs, tmp_path, monkeypatch):
    twin = tmp_path / "twin.db"  # a copy: the same part (guid) in two files
    shutil.copy(dbs["plain"], twin)
    streamed, held, used = _both([dbs["plain"], str(twin)], tmp_path, monkeypatch)
    assert not used
    assert streamed == held


@pytest.mark.parametrize("chunk", [1, 3, 16])
def test_streamed_as_held_on_the_common_run(run_db, tmp_path, monkeypatch, chunk):
    # the suite's usual database: kernels launched by API calls inside ROCTx ranges, copies on
    # the default stream beside kernels (two of them overlap: an "(overlap 1)" track), an
    # allocation, a sample
    monkeypatch.setattr(_perfetto_gpu, "CHUNK", chunk)
    streamed, held, used = _both([run_db[0]], tmp_path, monkeypatch)
    assert b"cudaLaunchKernel" in held and b"(overlap 1)" in held
    assert set(used) == {"GpuStream", "RegionStream"}
    assert streamed == held
