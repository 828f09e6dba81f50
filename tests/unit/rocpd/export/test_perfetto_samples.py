"""The Perfetto writer's CPU-profile samples (rocpd.export._perfetto_samples): the packets of
samples whose stack was sent before are encoded in bulk, and must be byte for byte what the
perfetto package's builder writes for them, as every packet was written before: pid and tid 0,
varints of every width, times out of order and equal, stacks first met anywhere, several threads
and sequences, more samples than one bulk slice."""

from __future__ import annotations

import io
from collections import namedtuple

import numpy as np
import pytest

pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                    reason="the 'perfetto' package is not installed")

from rocpd.export import _perfetto_samples as ps  # noqa: E402
from rocpd.export._perfetto_buffer import Budget  # noqa: E402
from rocpd.export.perfetto import _pb  # noqa: E402

Frame = namedtuple("Frame", "kind function file line")


def _profile(n: int, seed: int) -> ps.Profile:
    rng = np.random.default_rng(seed)
    frames = [Frame("python", f"f{i}", f"/src/m{i % 3}.py", i * 37) for i in range(6)]
    chains = [tuple(frames[: k + 1]) for k in range(6)] + [(frames[5], frames[0])]
    threads = [(0, 0), (1, 1), (300, 70000), ((1 << 32) - 1, 1 << 21)]
    times = rng.integers(0, 1 << 50, n)
    times[::7] = times[0]  # equal times keep the order read
    times[1::11] = rng.integers(0, 1 << 7, len(times[1::11]))
    prof = ps.Profile()
    for t in times.tolist():
        pid, tid = threads[int(rng.integers(len(threads)))]
        chain = chains[int(rng.integers(len(chains)))]
        prof.add_numbered(int(t), *prof.numbers(pid, tid, chain))
    return prof


def _written(prof: ps.Profile, seq: int, each: bool) -> bytes:
    pb, Builder = _pb()
    out = io.BytesIO()
    fh = Budget(out)
    b = Builder(fh)
    fh.events()
    if each:
        order = np.argsort(np.frombuffer(prof.ts, dtype=np.int64), kind="stable")
        prof._write_each(b, pb, seq, order)
    else:
        prof.write(b, pb, seq, fh)
    return out.getvalue()


@pytest.mark.parametrize("n, seq, bulk", [(1, 1, 1 << 16), (500, 1, 1 << 16), (3000, 300, 64)])
def test_bulk_packets_are_the_builders(monkeypatch, n, seq, bulk):
    monkeypatch.setattr(ps, "_BULK", bulk)
    prof = _profile(n, seed=n)
    bulk_bytes = _written(prof, seq, each=False)
    assert bulk_bytes == _written(prof, seq, each=True)
    assert len(bulk_bytes) > 20 * n


def test_an_empty_profile_writes_nothing():
    assert _written(ps.Profile(), 1, each=False) == b""
