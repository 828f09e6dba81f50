"""The caching allocator's capture on a real GPU (rocprof run --memory-allocation-trace): the rows
themselves, read with plain SQL (no rocpd analysis), against the allocator's own figures.

memana's programs (tests/gpu/programs/memory_*.py) plant a 1 GiB temporary (PEAK LINE), a 4 MiB
per step leak (LEAK LINE) and an uncaught out-of-memory (OOM LINE), and print
torch.cuda.memory_stats() at exit. Checked:
- the hook is attached although the session starts before CUDA's lazy init (source metadata
  'torch-caching-allocator', rows from the first allocation on), nothing dropped;
- peak allocated from the VIRTUAL block rows (running sum over time) = torch's
  allocated_bytes.all.peak, and from the segment rows = reserved_bytes.all.peak, within 1 %;
- each segment is also a REAL row of the runtime (cudaMalloc, CUPTI) at its address and size,
  and every allocator row is VIRTUAL (summing REAL rows counts the device once);
- the planted lines carry their blocks; backward work carries its forward op ("backward_of");
- the out-of-memory program leaves a complete database with the OOM row (request, device_free).

    python3 -m pytest -q -s tests/gpu/test_gpu_memory_capture.py

prints the figures (events, peaks, streams) for RESULTS.md."""

import json

import pytest
from gpuutil import ROOT, load_json_line, query, rocprof_run

torch = pytest.importorskip("torch")
PROGRAMS = ROOT / "tests/gpu/programs"
MiB = 1 << 20
ROWS = ("SELECT S.string, M.type, M.level, M.start, M.agent_id, M.address, M.size, M.stream_id,"
        " M.extdata, COALESCE(E.line_info, '{}'), E.call_stack, M.id FROM rocpd_memory_allocate M"
        " JOIN rocpd_event E ON E.id = M.event_id JOIN rocpd_string S ON S.id = E.category_id"
        " ORDER BY M.start, M.id")


def _line(name, mark):
    text = (PROGRAMS / name).read_text().splitlines()
    (n,) = [i + 1 for i, ln in enumerate(text) if ln.rstrip().endswith(f"# {mark}")]
    return n


def _stats(stdout):
    lines = [ln for ln in stdout.splitlines() if ln.startswith("ROCPROF_TORCH_STATS ")]
    assert lines, stdout[-2000:]
    return json.loads(lines[-1].split(" ", 1)[1])


def _site(db, call_stack):
    """The site frame of a row ({"site": id} → that node's first frame)."""
    if not call_stack:
        return {}
    ref = json.loads(call_stack).get("site")
    if ref is None:
        return {}
    (frames,) = query(db, "SELECT call_stack FROM rocpd_event WHERE id = ?", ref)[0]
    return json.loads(frames)[0]


def _read(db):
    rows = query(db, ROWS)
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata"))
    return rows, meta


def _peaks(rows, device_agent=2):
    """(peak of live block bytes, peak of live segment bytes) on one device, over time."""
    out = []
    for cat in ("TORCH_ALLOCATOR_BLOCK", "TORCH_ALLOCATOR_SEGMENT"):
        live = peak = 0
        for c, typ, _, _, agent, _, size, *_ in rows:
            if c == cat and agent == device_agent:
                live += size if typ == "ALLOC" else -size
                peak = max(peak, live)
        out.append(peak)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    out = {}
    for key, name, flag, args, ok in (
            ("memory_peak.py", "memory_peak.py", "--memory-allocation-trace",
             ["--steps", "4", "--peak-step", "2"], True),
            ("memory_leak.py", "memory_leak.py", "--memory-allocation-trace", ["--steps", "8"], True),
            ("memory_oom.py", "memory_oom.py", "--memory-allocation-trace", ["--chunk-gib", "8"],
             False),
            ("allocator-trace", "memory_peak.py", "--allocator-trace",
             ["--steps", "4", "--peak-step", "2"], True),
            ("memory_streams.py", "memory_streams.py", "--memory-allocation-trace", [], True)):
        tmp = tmp_path_factory.mktemp(key.replace(".py", ""))
        flags = (flag, "--kernel-trace") if name == "memory_streams.py" else (flag,)
        db, p = rocprof_run(tmp, *flags, str(PROGRAMS / name), *args, check=ok)
        out[key] = (db, p)
    return out


@pytest.mark.parametrize("name", ["memory_peak.py", "memory_leak.py"])
def test_peaks_from_the_rows_match_torchs_own(runs, name):
    db, p = runs[name]
    rows, meta = _read(db)
    stats = _stats(p.stdout)
    ours = [r for r in rows if r[0].startswith("TORCH_ALLOCATOR_")]
    allocated, reserved = _peaks(ours)
    streams = sorted({r[7] for r in ours})
    kernel_streams = [s for (s,) in query(db, "SELECT DISTINCT stream_id FROM rocpd_kernel_dispatch")]
    print(json.dumps({"program": name, "allocator_rows": len(ours),
                      "meta": {k: v for k, v in meta.items() if k.startswith("rocprof.memory.")},
                      "peak_allocated": [allocated, stats["allocated_bytes.all.peak"]],
                      "peak_reserved": [reserved, stats["reserved_bytes.all.peak"]],
                      "stream_ids": streams[:8], "kernel_stream_ids": kernel_streams[:8]}))
    assert meta["rocprof.memory.source"] == "torch-caching-allocator", meta
    assert meta["rocprof.memory.dropped"] == "0"
    assert int(meta["rocprof.memory.allocator_events"]) == len(ours)
    assert allocated == pytest.approx(stats["allocated_bytes.all.peak"], rel=0.01)
    assert reserved == pytest.approx(stats["reserved_bytes.all.peak"], rel=0.01)
    assert {r[2] for r in ours} == {"VIRTUAL"}
    # Each row names its stream as the kernels do (CUPTI's ids), so the two join.
    assert not kernel_streams or set(streams) <= set(kernel_streams), (streams, kernel_streams)


def test_rows_on_a_side_stream_carry_that_streams_id(runs):
    db, p = runs["memory_streams.py"]
    rows, _ = _read(db)
    blocks = [r for r in rows if r[0] == "TORCH_ALLOCATOR_BLOCK" and r[1] == "ALLOC"
              and r[6] == 4 << 20]
    kernels = query(db, "SELECT stream_id, count(*) FROM rocpd_kernel_dispatch GROUP BY 1")
    print(json.dumps({"block_streams": sorted({r[7] for r in blocks}), "kernel_streams": kernels,
                      "driver": load_json_line(p.stdout)}))
    # Two tensors and a temporary on each stream; each stream's kernels ran on the same ids.
    assert len(blocks) == 4, blocks
    assert len({r[7] for r in blocks}) == 2, blocks
    assert {r[7] for r in blocks} == {s for s, _ in kernels}, (blocks, kernels)


def test_the_allocator_alone_matches_torch_without_runtime_rows(runs):
    db, p = runs["allocator-trace"]
    rows, meta = _read(db)
    stats = _stats(p.stdout)
    allocated, reserved = _peaks(rows)
    print(json.dumps({"allocator-trace": {"rows": len(rows), "peak_allocated": allocated,
                                          "peak_reserved": reserved}}))
    assert meta["rocprof.memory.source"] == "torch-caching-allocator", meta
    assert {r[2] for r in rows} == {"VIRTUAL"}  # no runtime allocation traced
    assert allocated == pytest.approx(stats["allocated_bytes.all.peak"], rel=0.01)
    assert reserved == pytest.approx(stats["reserved_bytes.all.peak"], rel=0.01)


def test_segments_are_the_runtimes_real_allocations_too(runs):
    db, _ = runs["memory_peak.py"]
    rows, _ = _read(db)
    real = {(r[5], r[6]) for r in rows if r[2] == "REAL" and r[1] == "ALLOC"}
    segments = [(r[5], r[6]) for r in rows if r[0] == "TORCH_ALLOCATOR_SEGMENT" and r[1] == "ALLOC"]
    assert segments and real, (len(segments), len(real))
    missing = [s for s in segments if s not in real]
    assert not missing, f"{len(missing)} of {len(segments)} segments have no REAL row: {missing[:3]}"
    # The runtime's rows keep their own category: a reader of REAL rows sees each byte once.
    assert {r[0] for r in rows if r[2] == "REAL"} == {"MEMORY_ALLOCATION"}


def test_planted_lines_and_backward_work_carry_their_blocks(runs):
    db, _ = runs["memory_peak.py"]
    rows, _ = _read(db)
    blocks = [r for r in rows if r[0] == "TORCH_ALLOCATOR_BLOCK" and r[1] == "ALLOC"]
    sites = [(_site(db, r[10]), r[6]) for r in blocks]
    temp = [s for s, size in sites if size == 1 << 30]
    assert len(temp) == 1 and temp[0].get("line") == _line("memory_peak.py", "PEAK LINE"), temp
    assert temp[0]["file"].endswith("memory_peak.py")
    backward = {s.get("backward_of") for s, _ in sites if s.get("backward_of")}
    print(json.dumps({"backward_of": sorted(backward)[:10],
                      "no_line": sum(1 for s, _ in sites if not s), "blocks": len(sites)}))
    assert backward, "no block allocated in backward carries its forward op"
    db, p = runs["memory_leak.py"]
    rows, _ = _read(db)
    leak = [r for r in rows if r[0] == "TORCH_ALLOCATOR_BLOCK" and r[1] == "ALLOC"
            and _site(db, r[10]).get("line") == _line("memory_leak.py", "LEAK LINE")]
    assert len(leak) == 8 and {r[6] for r in leak} == {4 * MiB}, leak[:3]


def test_out_of_memory_leaves_a_complete_database_with_the_oom_row(runs):
    db, p = runs["memory_oom.py"]
    assert p.returncode != 0 and "OutOfMemoryError" in p.stderr, p.stderr[-2000:]
    rows, meta = _read(db)
    stats = _stats(p.stdout)
    assert meta.get("rocprof.status") == "complete", meta.get("rocprof.status")
    ooms = [r for r in rows if r[0] == "TORCH_ALLOCATOR_OOM"]
    print(json.dumps({"ooms": [(r[6], json.loads(r[8])) for r in ooms], "torch": stats}))
    assert len(ooms) == stats["num_ooms"] == 1
    _, typ, level, _, agent, address, size, _, extdata, _, call_stack, _ = ooms[0]
    assert (typ, level, agent, address, size) == ("ALLOC", "VIRTUAL", 2, 0, stats["chunk_bytes"])
    assert 0 <= json.loads(extdata)["device_free"] < stats["chunk_bytes"]
    assert _site(db, call_stack).get("line") == _line("memory_oom.py", "OOM LINE")
    live = sum(r[6] if r[1] == "ALLOC" else -r[6] for r in rows
               if r[0] == "TORCH_ALLOCATOR_BLOCK")
    assert live == pytest.approx(stats["chunks"] * stats["chunk_bytes"], rel=0.01)
