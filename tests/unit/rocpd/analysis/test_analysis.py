"""rocpd.analysis against values computed by hand on small databases written by the real writer.
Every expected number below is worked out in the comments from the fixture's own times (µs)."""

import json

import numpy as np
import pytest
from analysis_patterns import NCCL, copy, launch, ns, sync

import rocpd
from rocpd import analysis
from rocpd.analysis import intervals as iv
from rocpd.analysis.steps import candidates, detect_from, key_of
from rocpd.testing import DatabaseBuilder

US = 1000


def test_interval_algebra():
    a = iv.union([0, 5, 20, 22], [10, 8, 30, 25])  # [0,10) [20,30)
    assert a[0].tolist() == [0, 20] and a[1].tolist() == [10, 30]
    b = iv.union([8, 25], [21, 40])  # [8,21) [25,40)
    i = iv.intersect(a, b)
    assert list(zip(i[0].tolist(), i[1].tolist(), strict=True)) == [(8, 10), (20, 21), (25, 30)]
    assert iv.measure(iv.merge(a, b)) == 40  # [0,40)
    assert iv.covered(a, [0, 5, 15, 0], [5, 25, 20, 100]).tolist() == [5, 10, 0, 20]
    g = iv.gaps(a, 0, 35)
    assert list(zip(g[0].tolist(), g[1].tolist(), strict=True)) == [(10, 20), (30, 35)]


@pytest.fixture
def mixed(tmp_path):
    """One GPU, no steps. GPU ops (µs):
        K1 compute [0,100)   N1 nccl [50,200) stream 1   C1 H2D copy [250,300)
        K2 compute [400,500) N2 nccl [450,480) stream 1  K3 compute [600,700)
    Launch calls (µs): K1 [-20,-15)  N1 [-10,-5)  C1 [210,215): after the GPU ran dry at 200
    -> host late;  sync [280,305) returns as C1 ends at 300, K2 launched after it [320,330) ->
    sync;  N2 [330,335);  K3 [450,455) was queued long before the gap [500,600) -> other."""
    path = tmp_path / "mixed.db"
    with DatabaseBuilder(path) as b:
        launch(b, "gemm", -20, 5, 0, 100, site=("/w/m.py", 10, "f"))
        launch(b, NCCL, -10, 5, 50, 150, stream=1, site=("/w/m.py", 11, "f"))
        copy(b, "H2D", 210, 5, 250, 50, size=1000, site=("/w/m.py", 12, "f"))
        sync(b, 280, 25, site=("/w/m.py", 13, "f"), name="cudaStreamSynchronize")
        launch(b, "gemm", 320, 10, 400, 100, site=("/w/m.py", 10, "f"))
        launch(b, NCCL, 330, 5, 450, 30, stream=1, site=("/w/m.py", 11, "f"))
        launch(b, "relu", 450, 5, 600, 100, site=("/w/m.py", 14, "f"))
    return str(path)


def test_temporal_and_idle_breakdown_by_hand(mixed):
    with rocpd.connect(mixed) as db:
        a = analysis.analyze(db)
    assert a.step_name is None and a.step_source == "none"
    t = a.temporal.iloc[0]
    # span [0,700) = 700; compute = K1+K2+K3 = 300; comm alone = N1's [100,200) = 100;
    # memory alone = C1 50; idle = 700 - busy 450 = 250.
    assert t["SpanNs"] == 700 * US
    assert (t["ComputeNs"], t["CommunicationNs"], t["MemoryNs"], t["IdleNs"]) == \
        (300 * US, 100 * US, 50 * US, 250 * US)
    assert t["ComputePercent"] == pytest.approx(300 / 7)
    assert (t["Kernels"], t["Copies"]) == (5, 1)
    i = a.idle.iloc[0]
    # gaps [200,250) host late, [300,400) sync, [500,600) other
    assert (i["HostLateNs"], i["SyncNs"], i["OtherNs"], i["UnknownNs"], i["BetweenStepsNs"]) == \
        (50 * US, 100 * US, 100 * US, 0, 0)
    o = a.overlap.iloc[0]
    # comm total = 150 + 30 = 180; overlapping compute: [50,100) + [450,480) = 80
    assert (o["CommTotalNs"], o["OverlapNs"]) == (180 * US, 80 * US)
    assert o["OverlapPercent"] == pytest.approx(100 * 80 / 180)
    assert o["CommPercentOfBusy"] == pytest.approx(100 * 180 / 450)


def test_launch_statistics_by_hand(mixed):
    with rocpd.connect(mixed) as db:
        ls = analysis.kernel_launch_stats(db).set_index("Name")
    g = ls.loc["gemm"]  # K1: api 5, delay 20, gpu 100;  K2: api 10, delay 80, gpu 100
    assert (g["Calls"], g["GpuTotalNs"], g["GpuMeanNs"]) == (2, 200 * US, 100 * US)
    assert g["LaunchMeanNs"] == 7.5 * US and g["LaunchDelayMeanNs"] == 50 * US
    assert g["ShortPercent"] == 0 and g["ShorterThanLaunchPercent"] == 0
    n = ls.loc[NCCL]  # N1 delay 60, N2 delay 120
    assert n["LaunchDelayMeanNs"] == 90 * US and n["GpuMedianNs"] == 90 * US
    assert list(ls.index) == ["gemm", NCCL, "relu"]  # by total GPU time: 200, 180, 100


def test_lines_waits_and_ranges_by_hand(tmp_path):
    """Two steps on thread 1000, a data-loader thread 1001 with its own range. Step i at
    1000*i: forward range [+0,+100) launching A (30 µs) from m.py:5, then B (20 µs) from
    m.py:6 after forward; .item() (a D2H copy, 2 µs, m.py:9) that blocks [+60,+140)."""
    path = tmp_path / "lines.db"
    with DatabaseBuilder(path) as b:
        b.thread(1001, "loader")
        for s in range(2):
            at = 1000.0 * s
            b.marker(f"step {s}", ns(at), ns(at + 300))
            b.marker("forward", ns(at), ns(at + 100))
            launch(b, "A", at + 1, 4, at + 10, 30, site=("/w/m.py", 5, "forward"))
            launch(b, "B", at + 110, 4, at + 120, 20, site=("/w/m.py", 6, "step"))
            copy(b, "D2H", at + 125, 20, at + 141, 2, size=4, site=("/w/m.py", 9, "step"))
            b.marker("load", ns(at + 500), ns(at + 600), tid=1001)
    with rocpd.connect(str(path)) as db:
        a = analysis.analyze(db)
    assert a.step_name == "step" and a.step_source == "detected"
    assert list(a.steps["name"]) == ["step 0", "step 1"]
    lines = a.lines.set_index("Site")
    assert lines.loc["m.py:5", "GpuTimeNs"] == 60 * US and lines.loc["m.py:6", "GpuTimeNs"] == 40 * US
    assert lines.loc["m.py:9", "Ops"] == 2 and lines.loc["m.py:5", "TopKernel"] == "A"
    assert lines.loc["m.py:5", "Percent"] == pytest.approx(100 * 60 / 104)
    assert lines.loc["m.py:5", "Path"] == "/w/m.py:5"
    r = a.ranges.set_index("Range")
    # forward encloses A's launches only (30 µs, twice); a step encloses A, B and the copy;
    # load (another thread) nothing
    assert r.loc["forward", "GpuTimeNs"] == 60 * US and r.loc["forward", "Instances"] == 2
    assert r.loc["step 0", "GpuTimeNs"] == 52 * US and r.loc["step 1", "Ops"] == 3
    assert r.loc["load", "GpuTimeNs"] == 0 and r.loc["load", "HostNs"] == 200 * US
    w = a.waits.iloc[0]
    assert (w["Site"], w["Kind"], w["Calls"], w["BlockedNs"]) == ("m.py:9", "copy to host", 2, 40 * US)
    # after the copy ends (+143) the GPU idles until the next step's first kernel (+1010); the
    # host returned from the copy at +145 and launched again only at +1001: its own work in
    # between kept the GPU idle, not the wait, which the gap keeps as evidence (after_call).
    assert w["GpuIdleNs"] == 0
    gap = a.gaps[0].set_index("start").loc[ns(143)]
    assert (gap["cause"], gap["call"]) == ("HostLateNs", -1) and gap["after_call"] >= 0
    assert (gap["host_from"], gap["host_to"], gap["next_site"]) == (ns(145), ns(1001), "/w/m.py:5")
    ps = a.per_step
    assert list(ps["SpanNs"]) == [(143 - 10) * US, (1143 - 1010) * US]
    # inside a step: gap [+40,+120) before B, launched at +110 (host late: the call ended at
    # +114), and [+140,+141) before the copy, whose call [+125,+145) ended after it: 80 + 1
    assert list(ps["HostLateNs"]) == [81 * US, 81 * US]
    assert list(ps["Kernels"]) == [2, 2] and list(ps["Copies"]) == [1, 1]
    run = a.idle.iloc[0]
    assert run["BetweenStepsNs"] == (1010 - 143) * US and run["HostLateNs"] == 162 * US


def test_step_detection_prefers_steps_to_epochs_and_layers(tmp_path):
    """2 epochs x 4 iterations; each iteration has 3 'block N' ranges enclosing 90 % of its
    kernels (a range repeated 12 times an epoch that is not the step) and a 'data' range
    enclosing none."""
    path = tmp_path / "nest.db"
    with DatabaseBuilder(path) as b:
        for e in range(2):
            b.marker(f"epoch {e}", ns(e * 10_000), ns(e * 10_000 + 9_000))
            for i in range(4):
                at = e * 10_000 + i * 2000.0
                b.marker("iteration", ns(at), ns(at + 1900))
                b.marker("data", ns(at), ns(at + 50))
                for k in range(3):
                    b.marker(f"block {k}", ns(at + 100 + k * 500), ns(at + 590 + k * 500))
                    for j in range(3):
                        t = at + 110 + k * 500 + j * 100
                        launch(b, "gemm", t, 5, t + 10, 50)
                launch(b, "adam", at + 1700, 5, at + 1710, 50)
    with rocpd.connect(str(path)) as db:
        a = analysis.analyze(db)
        assert a.step_name == "iteration" and len(a.steps) == 8
        cands = {c["name"]: c for c in candidates(a.processes)}
        assert cands["block"]["count"] == 24 and cands["block"]["coverage"] == pytest.approx(0.9)
        assert cands["data"]["coverage"] == 0
        # Without a step-like name, the outermost most frequent range wins, and an epoch (2)
        # gives way to the nested range repeating 4x as often while enclosing as much.
        c = [dict(v) for v in cands.values()]
        for v in c:
            v["name"] = {"iteration": "it", "epoch": "ep"}.get(v["name"], v["name"])
        assert detect_from(c) == "it"
        assert analysis.analyze(db, step="block").step_name == "block"
        assert len(analysis.analyze(db, step="block 1").steps) == 8
        assert analysis.analyze(db, step="").step_name is None
        with pytest.raises(rocpd.RocpdError, match="no ROCTx range"):
            analysis.analyze(db, step="nonexistent")
    assert key_of("ProfilerStep#12") == "ProfilerStep" and key_of("epoch 3") == "epoch"
    assert key_of("step") == "step" and key_of("42") == "42"


def test_kernels_without_api_calls_leave_idle_unknown(tmp_path):
    path = tmp_path / "k.db"
    with DatabaseBuilder(path) as b:
        for i in range(5):
            b.kernel("k", ns(i * 100), ns(i * 100 + 10))
    with rocpd.connect(str(path)) as db:
        a = analysis.analyze(db)
    i = a.idle.iloc[0]
    assert i["UnknownNs"] == 4 * 90 * US and i["HostLateNs"] == i["SyncNs"] == 0
    assert [f.rule for f in a.findings()][0] == "no-api-calls"


def test_ranks_overlap_and_stragglers(tmp_path):
    from analysis_patterns import ranks

    paths = ranks(tmp_path, comm_us=(300, 300), compute_us=(600, 800), overlap=True)
    with rocpd.connect(*paths) as db:
        a = analysis.analyze(db)
        assert sorted(a.run["rank"]) == [0, 1]
        s = a.stragglers
        assert list(s["process"]) == ["rank 1", "rank 0"]
        assert list(s["ComputeNs"]) == [800 * US, 600 * US]
        assert s["ComputeVsMedianPercent"].iloc[0] == pytest.approx(100 * (800 - 700) / 700)
        o = a.overlap.set_index("process")
        assert o.loc["rank 0", "OverlapPercent"] == 100.0
        one = analysis.analyze(db, rank=1)
        assert list(one.run["process"]) == ["rank 1"]


def test_filters_and_read_only(mixed, tmp_path):
    import hashlib
    import os

    before = hashlib.sha256(open(mixed, "rb").read()).hexdigest()
    with rocpd.connect(mixed) as db:
        a = analysis.analyze(db, exclude="^relu$")
        assert "relu" not in set(a.launch_stats["Name"])
        a.findings()
    assert hashlib.sha256(open(mixed, "rb").read()).hexdigest() == before
    assert not os.path.exists(mixed + "-wal")


def test_analyze_cli_text_and_csv(mixed, tmp_path, cli):
    rc, out, err = cli("analyze", mixed)
    assert rc == 0, err
    for title in ("== FINDINGS ==", "== TEMPORAL BREAKDOWN", "== IDLE BREAKDOWN", "KERNEL LAUNCH",
                  "TOP PYTHON LINES", "m.py:10"):
        assert title in out
    rc, out, err = cli("analyze", mixed, "--section", "temporal", "--units", "ms")
    assert "ComputeMs" in out and "== IDLE" not in out and "0.300" in out
    rc, out, err = cli("analyze", mixed, "--format", "csv", "-o", tmp_path / "x")
    assert rc == 0, err
    import pandas as pd

    t = pd.read_csv(tmp_path / "x_temporal.csv")
    assert t["ComputeNs"].tolist() == [300 * US]
    f = pd.read_csv(tmp_path / "x_findings.csv")
    assert len(f) >= 1 and {"title", "suggestion", "evidence"} <= set(f.columns)
    rc, out, err = cli("analyze", mixed, "--format", "json")
    assert rc == 1 and "needs -o" in err
    rc, out, err = cli("analyze", mixed, "--step", "nope")
    assert rc == 1 and "no ROCTx range" in err


def test_pmc_free_database_and_json_sites(tmp_path):
    """Call sites reach the analysis as the writer stores them (line_info JSON)."""
    path = tmp_path / "s.db"
    with DatabaseBuilder(path) as b:
        launch(b, "k", 0, 5, 10, 10, site=("/a/b/train.py", 42, "main"))
    with rocpd.connect(str(path)) as db:
        li = db.execute("SELECT line_info FROM regions").fetchone()[0]
        a = analysis.analyze(db)
    assert json.loads(li) == {"file": "/a/b/train.py", "line": 42, "function": "main"}
    assert a.lines["Site"].tolist() == ["train.py:42"] and a.lines["Function"].tolist() == ["main"]
    assert np.isclose(a.lines["Percent"].iloc[0], 100.0)


def test_one_wait_counts_once_across_runtime_driver_and_sync_records(tmp_path):
    """CUPTI records a cudaStreamSynchronize three times: the runtime call (with its Python line),
    the driver call inside it, and a synchronisation record. The wait counts once, named by the
    runtime call's line; the GPU idles after it returns until the next launch."""
    path = tmp_path / "w.db"
    with DatabaseBuilder(path) as b:
        launch(b, "k", 0, 5, 10, 100, site=("/w/t.py", 3, "f"))
        b.region("CUDA_RUNTIME_API", "cudaStreamSynchronize", ns(6), ns(112), site=("/w/t.py", 4, "f"))
        b.region("CUDA_DRIVER_API", "cuStreamSynchronize", ns(7), ns(111), site=("/w/t.py", 4, "f"))
        b.region("CUDA_SYNCHRONIZATION", "STREAM_SYNCHRONIZE", ns(8), ns(110))
        launch(b, "k", 150, 5, 160, 100, site=("/w/t.py", 3, "f"))
    with rocpd.connect(str(path)) as db:
        a = analysis.analyze(db)
    w = a.waits
    assert len(w) == 1 and w.iloc[0]["Calls"] == 1 and w.iloc[0]["Site"] == "t.py:4"
    assert w.iloc[0]["BlockedNs"] == 106 * US and w.iloc[0]["GpuIdleNs"] == 50 * US  # [110,160)
    assert a.idle.iloc[0]["SyncNs"] == 50 * US
    # the launch calls are matched to their kernels, never the sync record of the same id
    assert a.launch_stats.iloc[0]["LaunchMeanNs"] == 5 * US
