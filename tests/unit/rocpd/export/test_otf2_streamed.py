"""The OTF2 archive written as it is read: every slice of a trace of many launches is in the
archive, nested per location, in memory that does not grow with the number of records."""

from __future__ import annotations

import tracemalloc

import pytest

import rocpd
from rocpd.export import _activity as act
from rocpd.testing import DatabaseBuilder

otf2 = pytest.importorskip("otf2", reason="the 'otf2' package is not installed")

LAUNCHES = 20_000


def test_every_slice_is_written_and_memory_does_not_grow_with_the_records(tmp_path, monkeypatch):
    from rocpd.export import otf2 as exporter

    monkeypatch.setattr(act, "_BLOCK", 500)  # blocks of 500 GPU rows: a test-sized trace spans many
    path = str(tmp_path / "big.db")
    with DatabaseBuilder(path) as b:
        for i in range(LAUNCHES):
            corr = b.next_correlation()
            t = i * 1_000
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t, t + 300, correlation_id=corr)
            # every 100th kernel overlaps the next, which does not nest in it: "(overlap 1)"
            b.kernel(f"kernel_{i % 50}", t + 400, t + (1_500 if i % 100 == 0 else 900),
                     correlation_id=corr)
    with rocpd.connect(path) as db:
        tracemalloc.start()
        try:
            anchor = exporter.write(db, str(tmp_path / "arch"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    enters: dict[str, int] = {}
    with otf2.reader.open(anchor) as tr:
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.Enter):
                enters[loc.name] = enters.get(loc.name, 0) + 1
    assert enters == {"MainThread": LAUNCHES, "Default Stream": LAUNCHES - LAUNCHES // 100,
                      "Default Stream (overlap 1)": LAUNCHES // 100}
    # Held, the slices took ~200 bytes each (8 MB here); streamed, a block of rows and the
    # open slices of each lane.
    assert peak < 2 * LAUNCHES * 200 / 4, f"peak {peak / 1e6:.1f} MB for {LAUNCHES} launches"
