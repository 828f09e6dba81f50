"""GPU hardware metrics per step, kernel, ROCTx range and line from real databases holding the
PM sampler's tracks (pm_profiles): time-weighted means of the step functions, equal with and
without repeated values stored, whatever the chunk the tracks are streamed in; DRAM against a
measured peak; the one-line headline."""

from __future__ import annotations

import json

import pm_profiles as prof
import pytest

import rocpd
from rocpd.analysis.activity import load
from rocpd.analysis.steps import steps_of
from rocpd.device_metrics import gpu_metrics as gm


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return prof.build(tmp_path_factory.mktemp("pm") / "run.db")


def _table(path, by, step="train_step"):
    with rocpd.connect(path) as conn:
        procs = load(conn)
        steps = {(p.guid, p.pid): steps_of(p, step) for p in procs}
        return gm.table(conn, procs, by=by, steps=steps)


def test_per_step_the_phases_average_by_time(db):
    df = _table(db, "step")
    assert list(df["step"]) == [0, 1]
    # Half GEMM (80 % tensor, 10 % DRAM), half copy (0 %, 90 %).
    assert df["TensorPercent"].tolist() == pytest.approx([40.0, 40.0])
    assert df["DramPercent"].tolist() == pytest.approx([50.0, 50.0])
    assert df["DramGBs"].tolist() == pytest.approx([1600.0, 1600.0])
    assert df["Seconds"].tolist() == pytest.approx([0.08, 0.08])
    assert "L2HitPercent" not in df.columns  # the run has no such track


def test_amds_device_counting_tracks_read_alike(tmp_path):
    amd = prof.build(tmp_path / "amd.db", name="AMD Instinct MI300X",
                     component="rocprofiler_sdk_device_counting")
    df = _table(amd, "step")
    assert df["TensorPercent"].tolist() == pytest.approx([40.0, 40.0])
    assert df["DramGBs"].tolist() == pytest.approx([1600.0, 1600.0])


def test_per_kernel_range_and_line(db):
    k = _table(db, "kernel").set_index("kernel")
    assert k.loc["gemm_bf16", "TensorPercent"] == pytest.approx(80.0)
    assert k.loc["gemm_bf16", "Count"] == 16
    assert k.loc["MEMORY_COPY_DEVICE_TO_DEVICE", "DramPercent"] == pytest.approx(90.0)
    assert k.loc["MEMORY_COPY_DEVICE_TO_DEVICE", "TensorPercent"] == pytest.approx(0.0)
    r = _table(db, "range").set_index("range")
    assert r.loc["gemm", "TensorPercent"] == pytest.approx(80.0)
    assert r.loc["copy", "DramGBs"] == pytest.approx(3000.0)
    lines = _table(db, "line")
    gemm_line = lines[lines["line"].str.contains("train.py:10")]
    assert gemm_line["TensorPercent"].tolist() == pytest.approx([80.0])


def test_unchanged_values_and_chunks_change_nothing(tmp_path, db, monkeypatch):
    full = prof.build(tmp_path / "full.db", dedup=False)
    a = _table(db, "kernel")
    b = _table(full, "kernel")
    assert a["TensorPercent"].tolist() == pytest.approx(b["TensorPercent"].tolist())
    monkeypatch.setattr(gm, "CHUNK", 7)  # a sweep across many chunk boundaries
    c = _table(full, "kernel")
    assert c["DramPercent"].tolist() == pytest.approx(b["DramPercent"].tolist())


def test_dram_against_the_measured_peak_and_the_headline(db, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "rocprof").mkdir()
    (tmp_path / "rocprof" / "peaks.json").write_text(json.dumps(
        {"GPU-1": {"device": "NVIDIA H200", "dram_bytes_per_second": 4.0e12}}))
    df = _table(db, "step")
    assert df["DramPeakPercent"].tolist() == pytest.approx([40.0, 40.0])
    line = gm.headline(df.iloc[0])
    assert line == "40 % tensor-busy, 78 % SM-active, 50 % DRAM (1600 GB/s, 40 % of measured peak)"
    with rocpd.connect(db) as conn:
        whole = gm.whole_run(conn)
    assert len(whole) == 1 and 0 < whole["TensorPercent"][0] < 40


def test_integrals_before_inside_and_after_the_samples():
    chunks = [(__import__("numpy").array([10, 20, 30]), __import__("numpy").array([1.0, 3.0, 3.0]))]
    import numpy as np

    integ, cover = gm.integrals(iter(chunks), np.array([0, 10, 15, 25, 30, 99]))
    assert integ.tolist() == [0.0, 0.0, 5.0, 25.0, 40.0, 40.0]
    assert cover.tolist() == [0.0, 0.0, 5.0, 15.0, 20.0, 20.0]


def test_no_tracks_no_rows(tmp_path):
    from rocpd.testing import DatabaseBuilder

    path = tmp_path / "plain.db"
    with DatabaseBuilder(path, gpus=1) as b:
        b.kernel("k", 1000, 2000)
    with rocpd.connect(path) as conn:
        assert gm.table(conn, load(conn), by="kernel").empty
        assert gm.whole_run(conn).empty


def test_plot_draws_steps_and_the_json_export_has_the_tracks(db, tmp_path):
    pytest.importorskip("matplotlib")
    from rocpd.device_metrics.plots import metrics_over_time

    with rocpd.connect(db) as conn:
        fig = metrics_over_time(conn, metrics=["pm_tensor_active"])
    (line,) = fig.axes[0].lines
    assert line.get_drawstyle() == "steps-post"
    from rocpd.export import find

    with rocpd.connect(db) as conn:
        (out,) = find("json").write_named(conn, str(tmp_path), "t")
    with open(out) as fh:
        events = json.load(fh)
    events = events["traceEvents"] if isinstance(events, dict) else events
    tensor = [e for e in events if e.get("ph") == "C" and e["name"] == "pm_tensor_active [0]"]
    assert [e["args"]["value"] for e in tensor[:3]] == [0.0, 80.0, 0.0]


def test_summary_says_it_in_one_line_and_keeps_the_tracks_out_of_device_metrics(db):
    from rocpd.summary.stats import format_summary

    text = format_summary(db)
    assert ("== GPU_METRICS ==\npid 1000 GPU 0, per train_step step (2 steps): 40 % tensor-busy, "
            "78 % SM-active, 50 % DRAM (1600 GB/s)\n") in text
    assert "DEVICE_METRICS" not in text  # their plain mean would count stored values, not time
    assert "GPU_METRICS" in format_summary(db, domains=["gpu_metrics"])


def _findings(path):
    from rocpd.analysis import analyze

    with rocpd.connect(path) as conn:
        return {f.rule: f for f in analyze(conn).findings()}


def test_rules_low_tensor_activity_in_gemm_heavy_work_and_bandwidth_bound_phases(db, tmp_path):
    found = _findings(db)
    assert "low-tensor-activity" not in found  # 80 % busy GEMMs
    bw = found["bandwidth-bound"]
    assert bw.title == "1 ROCTx phase(s) (25 % of the ranged time) are bound by DRAM bandwidth"
    assert bw.evidence[0].startswith("pid 1000 GPU 0 range 'copy': DRAM 90 % of peak, tensor 0 %")
    # The same run with GEMMs that keep the tensor pipes 12 % busy (fp32 without TF32, say).
    slow = _findings(prof.build(tmp_path / "slow.db", tensor_gemm=12.0))
    low = slow["low-tensor-activity"]
    assert low.title == "GEMM-heavy work keeps the tensor pipes only 12 % busy"
    assert "gemm_bf16: 80.0 ms, tensor 12 %" in low.evidence


def test_no_metrics_no_findings_of_theirs(tmp_path):
    from rocpd.testing import DatabaseBuilder

    path = tmp_path / "plain.db"
    with DatabaseBuilder(path, gpus=1) as b:
        b.marker("copy", 0, 10_000)
        b.kernel("gemm", 1000, 9000)
    found = _findings(path)
    assert "low-tensor-activity" not in found and "bandwidth-bound" not in found


def test_cli_prints_the_headline_and_the_table_and_refuses_a_run_without(db, tmp_path):
    from support import run_rocpd

    r = run_rocpd("gpumetrics", db, "--by", "range", "--csv", str(tmp_path / "r.csv"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("pid 1000 GPU 0, per train_step step: 40 % tensor-busy")
    assert "copy" in r.stdout and (tmp_path / "r.csv").read_text().startswith("process,rank,pid,gpu,range")
    r = run_rocpd("analyze", db)
    assert "GPU metrics pid 1000 GPU 0, per train_step step: 40 % tensor-busy" in r.stdout
    from rocpd.testing import DatabaseBuilder

    plain = tmp_path / "plain.db"
    with DatabaseBuilder(plain, gpus=1) as b:
        b.kernel("k", 1000, 2000)
    r = run_rocpd("gpumetrics", str(plain))
    assert r.returncode != 0 and r.stderr.count("\n") == 1
    assert "record them with `rocprof run --gpu-metrics" in r.stderr


def test_report_has_the_section_with_the_headline(db, tmp_path):
    from support import run_rocpd

    out = tmp_path / "r.html"
    r = run_rocpd("report", db, "-o", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "GPU hardware metrics: tensor pipes, SMs and DRAM over time" in page
    assert "per train_step step: 40 % tensor-busy" in page
