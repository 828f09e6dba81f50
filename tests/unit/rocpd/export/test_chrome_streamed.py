"""The Chrome trace written as it is read: the same document json.dump writes (one JSON value,
``, `` between events), regions in time order with the longer of two that start together
first, every flow from the last launching call of its correlation id (a graph launch: one
call, several kernels), and memory that does not grow with the number of records."""

from __future__ import annotations

import json
import tracemalloc

import rocpd
from rocpd.export import _activity as act
from rocpd.export import chrome
from rocpd.testing import DatabaseBuilder

LAUNCHES = 20_000


def _graph_db(path) -> str:
    with DatabaseBuilder(path) as b:
        b.thread(1001, "worker")
        t = 1_000
        for g in range(40):
            corr = b.next_correlation()
            # Two calls of one id starting together (runtime over driver), then a later one:
            # the later call is the one its kernels link to.
            b.region("CUDA_RUNTIME_API", "cudaGraphLaunch", t, t + 500, correlation_id=corr)
            b.region("CUDA_DRIVER_API", "cuGraphLaunch", t, t + 400, correlation_id=corr)
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t + 600, t + 650, tid=1001,
                     correlation_id=corr)
            for k in range(4):
                name = 'gemm "q", ünï\t' if k == 3 else f"k{k}"
                b.kernel(name, t + 1_000 + k * 100, t + 1_050 + k * 100, correlation_id=corr,
                         stream=k % 2)
            b.marker(f"step {g}", t, t + 700)
            t += 2_000
        b.kernel("no launch", t, t + 10, correlation_id=0)
    return str(path)


def test_the_document_orders_regions_and_links_each_kernel_to_its_last_launch(tmp_path):
    path = _graph_db(tmp_path / "g.db")
    out = str(tmp_path / "t.json")
    with rocpd.connect(path) as db:
        chrome.write(db, out)
    text = open(out).read()
    doc = json.loads(text)
    assert text == json.dumps(doc)  # the bytes json.dump writes of the whole document
    assert list(doc) == ["traceEvents", "displayTimeUnit"]
    ev = doc["traceEvents"]
    cpu = [e for e in ev if e["ph"] == "X" and e["tid"] < chrome._GPU_TID_BASE]
    keys = [(e["ts"], -e["dur"]) for e in cpu]
    assert keys == sorted(keys) and len(cpu) == 40 * 4
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = [e for e in ev if e["ph"] == "f"]
    kernels = [e for e in ev if e["ph"] == "X" and e.get("cat") == "kernel"]
    assert len(ends) == len(kernels) - 1 == 160  # every kernel but the one without a launch
    for f in ends:
        s = starts[f["id"]]
        # the last call of the id in time order: cudaLaunchKernel on the worker thread
        call = next(e for e in cpu if e["name"] == "cudaLaunchKernel"
                    and e["args"]["corr_id"] == int(f["id"].split(":")[1]))
        assert (s["tid"], s["ts"]) == (1001, call["ts"]), (s, call)


def test_memory_does_not_grow_with_the_records(tmp_path, monkeypatch):
    # Blocks of 500 rows (65,536 and 16,384 in use) so that a test-sized trace spans many.
    monkeypatch.setattr(act, "_BLOCK", 500)
    monkeypatch.setattr(chrome, "_GPU_BLOCK", 500)
    monkeypatch.setattr(chrome._Events, "_BATCH", 500)
    path = str(tmp_path / "big.db")
    with DatabaseBuilder(path) as b:
        for i in range(LAUNCHES):
            corr = b.next_correlation()
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", i * 1_000, i * 1_000 + 300,
                     correlation_id=corr)
            b.kernel(f"kernel_{i % 50}", i * 1_000 + 400, i * 1_000 + 900, correlation_id=corr)
    with rocpd.connect(path) as db:
        tracemalloc.start()
        try:
            chrome.write(db, str(tmp_path / "t.json"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    with open(tmp_path / "t.json") as fh:
        assert len(json.load(fh)["traceEvents"]) >= 4 * LAUNCHES
    # Held, the events took ~400 bytes each (4 per launch, 32 MB here); streamed, a block of
    # rows, a batch of events and 32 bytes a launching call (sorted once: ~3 MB here).
    assert peak < LAUNCHES * 4 * 400 / 8, f"peak {peak / 1e6:.1f} MB for {LAUNCHES} launches"
