"""Perfetto export decoded with Perfetto's own protos and checked against the database's rows."""

import glob
import os
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from support import ROOT

import rocpd

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the 'perfetto' package is not installed")


def _decode(path):
    trace = pb.Trace()
    with open(path, "rb") as fh:
        trace.ParseFromString(fh.read())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    slices = []  # (track, name, start, end, depth, parent name, corr, flows out, flows in)
    stacks = {}
    for p in trace.packet:
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        if e.type in (pb.TrackEvent.TYPE_COUNTER, pb.TrackEvent.TYPE_INSTANT):
            continue
        st = stacks.setdefault(e.track_uuid, [])
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            corr = next((a.int_value for a in e.debug_annotations if a.name == "corr_id"), None)
            st.append([e.track_uuid, e.name, p.timestamp, None, len(st), st[-1][1] if st else None, corr,
                       list(e.flow_ids), list(e.terminating_flow_ids)])
        else:
            assert e.type == pb.TrackEvent.TYPE_SLICE_END and st, "END without BEGIN"
            s = st.pop()
            s[3] = p.timestamp
            slices.append(tuple(s[:6]) + (s[6], tuple(s[7]), tuple(s[8])))
    assert all(not s for s in stacks.values()), "unterminated slices"
    return tracks, slices


def _write(db_path, out, **kw):
    from rocpd.export import perfetto

    with rocpd.connect(db_path) as db:
        return perfetto.write(db, str(out), **kw)


def test_tracks_slices_nesting_and_flows(run_db, tmp_path):
    path, raw = run_db
    tracks, slices = _decode(_write(path, tmp_path / "t.pftrace"))
    procs = [t for t in tracks.values() if t.HasField("process")]
    threads = [t for t in tracks.values() if t.HasField("thread")]
    assert [p.process.pid for p in procs] == [1000]
    assert [(t.thread.pid, t.thread.tid, t.thread.thread_name) for t in threads] == [(1000, 1000, "MainThread")]
    gpu = [t for t in tracks.values() if t.name.startswith("GPU 0")]
    assert len(gpu) == 1 and gpu[0].parent_uuid == procs[0].uuid
    streams = {t.name: t.uuid for t in tracks.values()
               if t.parent_uuid == gpu[0].uuid and not t.HasField("counter")}
    assert set(streams) == {"Default Stream", "Stream 1"}
    counters = {t.name for t in tracks.values() if t.HasField("counter")}
    assert counters == {"Allocated bytes (GPU 0)"}  # the run's one allocation

    cpu = Counter((s[1], s[2], s[3]) for s in slices if s[0] == threads[0].uuid)
    assert cpu == Counter([*raw["markers"], *raw["api"]])
    on_gpu = [s for s in slices if tracks[s[0]].parent_uuid in (gpu[0].uuid, *streams.values())]
    kernels = Counter((s[1], s[2], s[3]) for s in on_gpu if s[1] != "MEMORY_COPY_HOST_TO_DEVICE")
    assert kernels == Counter((n, a, b) for n, a, b, _ in raw["kernels"])
    copies = sorted((s[1], s[2], s[3]) for s in on_gpu if s[1] == "MEMORY_COPY_HOST_TO_DEVICE")
    assert copies == sorted(raw["copies"])
    # Copies 3 and 4 overlap without nesting: the later one goes to an overlap track under its stream.
    overlap = [t for t in tracks.values() if t.name == "(overlap 1)"]
    assert len(overlap) == 1 and overlap[0].parent_uuid == streams["Default Stream"]

    # ROCTx nesting: every "step" and every API call sits inside "train".
    for s in slices:
        if s[1] == "train":
            assert s[4] == 0
        elif s[0] == threads[0].uuid:
            assert s[4] >= 1 and s[5] in ("train", "step"), s
    # Flows: each API call's flow ends on the kernel with the same correlation id.
    out = {f: s for s in slices for f in s[7]}
    inn = {f: s for s in slices for f in s[8]}
    assert len(out) == len(raw["kernels"]) and set(out) == set(inn)
    for f, src in out.items():
        assert src[1] == "cudaLaunchKernel" and inn[f][6] == src[6]
        assert inn[f][2] >= src[2]


def test_filters_and_cli(run_db, tmp_path):
    path, raw = run_db
    _, slices = _decode(_write(path, tmp_path / "g.pftrace", include="gemm"))
    names = Counter(s[1] for s in slices)
    assert names["gemm_fp16"] == sum(1 for r in raw["kernels"] if r[0] == "gemm_fp16")
    assert names["relu"] == 0
    # Launches of filtered-out kernels keep their slice but lose the dangling flow.
    assert sum(len(s[7]) for s in slices) == names["gemm_fp16"]
    out = tmp_path / "c.pftrace"
    r = subprocess.run([sys.executable, "-m", "rocpd", "convert", path, "-f", "perfetto", "-o", str(out)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    unfiltered = _decode(out)[1]
    assert len(unfiltered) == len(slices) + sum(1 for r in raw["kernels"] if r[0] != "gemm_fp16")


def test_lanes_split_overlaps_only():
    import numpy as np

    from rocpd.export.perfetto import _lanes

    names = ["a", "b", "c", "d"]
    lanes = _lanes(np.array([0, 2, 8, 12]), np.array([10, 5, 12, 13]))
    assert len(lanes) == 2
    begun = [[names[c >> 1] for c in codes if c & 1] for _, codes in lanes]
    assert begun == [["a", "b", "d"], ["c"]]
    times, codes = lanes[0]
    assert [(t, bool(c & 1)) for t, c in zip(times, codes, strict=True)] == [(0, True), (2, True), (5, False),
                                                               (10, False), (12, True), (13, False)]


def _trace_processor_shell():
    found = shutil.which("trace_processor_shell") or shutil.which("trace_processor")
    if found:
        return found
    cached = glob.glob(os.path.expanduser("~/.local/share/perfetto/prebuilts/trace_processor_shell*"))
    return cached[0] if cached else None


def test_trace_processor_loads_it(run_db, tmp_path):
    shell = _trace_processor_shell()
    if shell is None:
        pytest.skip("trace_processor_shell is not on this machine and the perfetto package would "
                    "download it (no network here)")
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    path, raw = run_db
    out = _write(path, tmp_path / "tp.pftrace")
    tp = TraceProcessor(trace=out, config=TraceProcessorConfig(bin_path=shell))
    try:
        n = next(iter(tp.query("select count(*) as n from slice"))).n
        flows = next(iter(tp.query("select count(*) as n from flow"))).n
    finally:
        tp.close()
    assert n == len(raw["kernels"]) + len(raw["copies"]) + len(raw["markers"]) + len(raw["api"])
    assert flows == len(raw["kernels"])
