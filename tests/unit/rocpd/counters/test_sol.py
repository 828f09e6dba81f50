"""rocpd sol: speed of light per kernel and for the run, and the roofline, from a --sol profile
written through the real writer (rocpd.counters.sol_example). Expected figures are worked out here from
the example's inputs, not read back from rocpd."""

from __future__ import annotations

import json
import math

import pytest

import rocpd
from rocpd.counters import roofline, sol, sol_example
from rocpd.testing import DatabaseBuilder
from rocshared import kernel_metrics as metrics

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64"
COPY = "vectorized_elementwise_kernel<copy_float>"
NORM = "layer_norm_kernel<float>"


@pytest.fixture
def sol_db(tmp_path):
    path = tmp_path / "sol_results.db"
    sol_example.build(path)
    return str(path)


def _kernel(res, name):
    return res.kernels[res.kernels["kernel_name"] == name].iloc[0]


def _run(res, key):
    return res.run[res.run["key"] == key].iloc[0]


def test_gemm_flops_and_percent_of_tensor_peak(sol_db):
    durations, values = sol_example.KERNELS[GEMM]
    flops = values["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]
    assert flops == 2 * 8192 ** 3
    want = 3 * flops / (sum(durations) / 1e9)  # time-weighted: all work over all time
    peak = 4096 * 132 * sol_example.SM_HZ       # per-cycle hardware peak x the kernel's clock
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db)
    k = _kernel(res, GEMM)
    assert sol.dominant(k) == "tensor_bf16"
    assert k["rate_tensor_bf16"] == pytest.approx(want, rel=1e-12)
    assert k["peak_tensor_bf16"] == pytest.approx(peak, rel=1e-12)
    assert 100 * k["rate_tensor_bf16"] / k["peak_tensor_bf16"] == pytest.approx(74.76, abs=0.01)
    # Arithmetic intensity: FLOPs (all floating-point precisions) per DRAM byte.
    dram = values[metrics.DRAM_READ] + values[metrics.DRAM_WRITE]
    scalar = 2 * values["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    assert k["intensity_dram"] == pytest.approx((flops + scalar) / dram, rel=1e-12)


def test_copy_bandwidth_against_theoretical_and_empirical_peaks(sol_db):
    durations, _ = sol_example.KERNELS[COPY]
    bytes_moved = 2 * sol_example.COPY_BYTES * len(durations)
    want = bytes_moved / (sum(durations) / 1e9)
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db)
    k = _kernel(res, COPY)
    assert k["rate_dram"] == pytest.approx(want, rel=1e-12)
    assert k["peak_dram"] == pytest.approx(1288.0 * sol_example.DRAM_HZ, rel=1e-12)
    emp = res.peaks[2].empirical["dram"]
    assert emp == sol_example.EMPIRICAL["dram_bytes_per_second"]
    assert 100 * k["rate_dram"] / emp == pytest.approx(100 * want / 3.05e12)  # 102 %: beat the benchmark
    # FP32 work of the copy (x * 1.0): one FMUL per element.
    assert k["flops_fp32"] == pytest.approx(sol_example.COPY_BYTES / 4 * len(durations))


def test_run_level_is_time_weighted_over_every_dispatch(sol_db):
    total_s = sum(sum(d) for d, _ in sol_example.KERNELS.values()) / 1e9
    bytes_dram = sum((v.get(metrics.DRAM_READ, 0) + v.get(metrics.DRAM_WRITE, 0)) * len(d)
                     for d, v in sol_example.KERNELS.values())
    occ = sum(v[metrics.OCCUPANCY] * sum(d) for d, v in sol_example.KERNELS.values()) / (total_s * 1e9)
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db)
    dram = _run(res, "dram")
    assert dram["value"] == pytest.approx(bytes_dram / total_s, rel=1e-12)
    assert dram["pct_of_peak"] == pytest.approx(100 * dram["value"] / (1288.0 * sol_example.DRAM_HZ))
    assert dram["pct_of_empirical"] == pytest.approx(100 * dram["value"] / 3.05e12)
    assert _run(res, "occupancy")["value"] == pytest.approx(occ, rel=1e-12)
    assert _run(res, "occupancy")["peak"] == 100.0
    tensor = _run(res, "tensor_bf16")
    assert tensor["peak_source"].startswith("hardware counters")
    assert tensor["empirical_peak"] == 7.7e14
    # Precisions nobody used are not lines of the table.
    assert "tensor_fp8" not in set(res.run["key"])


def test_property_peaks_when_the_run_has_no_peak_counters(tmp_path):
    """A --pmc run with bytes and duration only: the DRAM peak comes from the device's
    bandwidth property, FP32 from the architecture's per-SM rate."""
    path = tmp_path / "pmc.db"
    with DatabaseBuilder(path) as b:
        b.gpu(0, name="NVIDIA A100-SXM4-80GB", model_name="sm_80", uuid="GPU-aaaa",
              extdata={"compute_capability": "8.0", "multiprocessors": 108, "core_clock_khz": 1410000,
                       "global_memory_bandwidth_kbps": 2039000000})
        corr = b.kernel("stream_triad", 0, 2_000_000)
        b.counter_value(corr, metrics.DRAM_READ, 2e9)
        b.counter_value(corr, metrics.DRAM_WRITE, 1e9)
        b.counter_value(corr, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.5e8)
    with rocpd.connect(str(path)) as db:
        res = sol.compute(db, peaks_file=None)
    dram = _run(res, "dram")
    assert dram["value"] == pytest.approx(3e9 / 2e-3)  # the kernel record's duration: 2 ms
    assert dram["peak"] == pytest.approx(2.039e12)
    assert dram["peak_source"] == "device property (memory bandwidth)"
    fp32 = _run(res, "fp32")
    assert fp32["value"] == pytest.approx(5e8 / 2e-3)
    assert fp32["peak"] == pytest.approx(2 * 64 * 108 * 1.41e9)
    assert "datasheet" in fp32["peak_source"]


def test_ampere_fp16_tensor_names_are_summed(tmp_path):
    path = tmp_path / "a100.db"
    with DatabaseBuilder(path) as b:
        corr = b.kernel("hgemm", 0, 1_000_000)
        b.counter_value(corr, "sm__ops_path_tensor_src_fp16_dst_fp16.sum", 1e11)
        b.counter_value(corr, "sm__ops_path_tensor_src_fp16_dst_fp32.sum", 2e11)
        b.counter_value(corr, metrics.DURATION, 1_000_000)
    with rocpd.connect(str(path)) as db:
        k = sol.compute(db).kernels.iloc[0]
    assert k["rate_tensor_fp16"] == pytest.approx(3e11 / 1e-3)


def test_peaks_file_and_uuid_spellings(sol_db, tmp_path):
    peaks = tmp_path / "peaks.json"
    # Spelled as PyTorch may (no "GPU-" prefix, upper case): the same device.
    key = sol_example.GPU_UUID.replace("GPU-", "").upper()
    peaks.write_text(json.dumps({key: {"device": "x", "dram_bytes_per_second": 2.0e12,
                                       "flops": {"tensor_bf16": 6.0e14}}}))
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db, peaks_file=str(peaks))
    assert res.peaks[2].empirical == {"dram": 2.0e12, "tensor_bf16": 6.0e14}


def test_sol_cli(sol_db, tmp_path, cli):
    rc, out, err = cli("sol", sol_db, "--roofline", tmp_path / "roof.png", "--json", tmp_path / "s.json")
    assert rc == 0, err
    assert "SPEED OF LIGHT: run on NVIDIA H100 80GB HBM3" in out
    line = next(x for x in out.splitlines() if x.startswith("BF16 tensor"))
    assert "948.9 TFLOP/s" in line and "770.0 TFLOP/s" in line  # theoretical and empirical peaks
    gemm = next(x for x in out.splitlines() if x.startswith("sm90_xmma_gemm"))
    assert "709.4 TFLOP/s" in gemm and " 74.8 " in gemm
    data = json.loads((tmp_path / "s.json").read_text())
    by_name = {k["kernel"]: k for k in data["kernels"]}
    assert by_name[COPY]["metrics"]["dram"]["pct_of_peak"] == pytest.approx(
        100 * 2 * sol_example.COPY_BYTES / (689.75e-6) / (1288 * 2.6e9), rel=1e-9)
    assert (tmp_path / "roof.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sol_cli_errors_are_one_line(tmp_path, cli):
    with DatabaseBuilder(tmp_path / "plain.db") as b:
        b.kernel("k", 0, 10)
    rc, _, err = cli("sol", tmp_path / "plain.db")
    assert rc == 1 and err.count("\n") == 1 and "rocprof run --sol" in err
    rc, _, err = cli("sol", tmp_path / "plain.db", "--peaks", tmp_path / "missing.json")
    assert rc == 1 and err.count("\n") == 1 and "--peaks" in err


def test_roofline_figure_has_a_point_per_kernel_and_a_roof_per_precision(sol_db):
    pytest.importorskip("matplotlib")
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db)
        fig = roofline.figure(res)
        png = roofline.png_bytes(db)
    ax = fig.axes[0]
    assert len(ax.collections) == 3  # one scatter per kernel
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(lb.startswith("BF16/FP16 tensor 770.0 TFLOP/s empirical") for lb in labels)
    assert any(lb.startswith("FP32 50.0 TFLOP/s empirical") for lb in labels)
    assert any(lb.startswith("FP64 29.7 TFLOP/s theoretical") for lb in labels)
    assert any(lb.startswith("DRAM 3.0 TB/s empirical") for lb in labels)
    pts = roofline.points(res).set_index("kernel")
    assert math.isclose(pts.loc[COPY, "intensity"], _kernel(res, COPY)["intensity_dram"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


@pytest.mark.filterwarnings("error")
def test_roofline_without_peaks_draws_the_roofs_it_has_and_no_empty_legend(sol_db):
    """No DRAM peak: the compute roofs alone, said on the figure; no peak at all: no legend
    (matplotlib warned of one with nothing to name)."""
    pytest.importorskip("matplotlib")
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db)
    for pk in res.peaks.values():
        pk.empirical.pop("dram", None)
        pk.theoretical.pop("dram", None)
    ax = roofline.figure(res).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(lb.startswith("FP32 50.0 TFLOP/s empirical") for lb in labels), labels
    assert not any(lb.startswith("DRAM") for lb in labels) and ax.get_legend() is not None
    assert any("no DRAM bandwidth peak" in t.get_text() for t in ax.texts)
    for pk in res.peaks.values():
        pk.empirical.clear()
        pk.theoretical.clear()
    ax = roofline.figure(res).axes[0]
    assert ax.get_legend() is None and len(ax.collections) == 3


def test_sol_set_is_optional_names_covering_every_precision():
    names = metrics.sol_metrics()
    assert all(n.startswith("?") for n in names) and len(names) == len(set(names))
    bare = {n[1:] for n in names}
    for p in metrics.PRECISIONS:
        assert {m for group in p.alternatives for m, _ in group} <= bare
        assert set(p.peak_metrics) <= bare


def test_counters_sol_cannot_use_are_said_so(tmp_path, cli):
    """A rocprofv3-style --pmc run (AMD names): counters, but no speed-of-light inputs."""
    with DatabaseBuilder(tmp_path / "amd.db") as b:
        corr = b.kernel("k", 0, 1000)
        b.counter_value(corr, "SQ_WAVES", 64.0)
        b.counter_value(corr, "GRBM_COUNT", 1234.0)
    rc, out, err = cli("sol", tmp_path / "amd.db")
    assert rc == 0, err
    assert "none that speed of light is computed from (GRBM_COUNT, SQ_WAVES)" in out


def test_report_has_the_speed_of_light_section(sol_db, tmp_path):
    """`rocpd report` shows speed of light and the roofline (rocpd.report.sections.OPTIONAL) for a
    run with per-kernel counters, and no such section for one without."""
    from rocpd import report
    from rocpd.testing import DatabaseBuilder

    with rocpd.connect(sol_db) as db:
        text = report.build(db)
    assert "<section id='roofline'>" in text
    assert "SPEED OF LIGHT: per kernel" in text and "data:image/png;base64," in text
    plain = tmp_path / "plain.db"
    with DatabaseBuilder(plain) as b:
        b.kernel("k", 0, 1000)
    with rocpd.connect(str(plain)) as db:
        assert "id='roofline'" not in report.build(db)


def test_above_the_empirical_peak_is_flagged_with_its_reason(sol_db, tmp_path, cli):
    """An empirical peak measured below what the kernels reach (the GEMM runs at 709.4 TFLOP/s,
    the run at 439.8, the peaks file says 400): the table marks the line and says why, never
    silently."""
    rc, out, _ = cli("sol", sol_db)
    # the example's copy kernel moves 3.11 TB/s against a measured 3.05: said, with the reason
    assert rc == 0 and "above its empirical peak" not in out
    copy = out[out.index("! kernels above an empirical peak:"):].splitlines()[1]
    assert copy.startswith(f"  {COPY}: DRAM bandwidth 102.1 % of the empirical peak: empirical "
                           "peak measured below the hardware's (3.0 TB/s = 91 % of its 3.3 TB/s)")
    peaks = tmp_path / "peaks.json"
    peaks.write_text(json.dumps({sol_example.GPU_UUID: {
        "device": "x", "dram_bytes_per_second": 3.0e12, "l2_bytes_per_second": 1.0e12,
        "flops": {"tensor_bf16": 4.0e14}}}))
    rc, out, err = cli("sol", sol_db, "--peaks", peaks)
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.startswith("BF16 tensor"))
    assert "!" in line and line.rstrip().endswith("[1]"), line
    notes = out[out.index("! above its empirical peak:"):]
    assert ("BF16 tensor: %Emp" in notes and "empirical peak measured below the hardware's "
            "(400.0 TFLOP/s = 42 % of its 948.9 TFLOP/s); the kernels ran at 439.8 TFLOP/s" in notes), notes
    kernels = out[out.index("! kernels above an empirical peak:"):]
    assert "sm90_xmma_gemm" in kernels and "BF16 tensor 177.3 % of the empirical peak" in kernels
    with rocpd.connect(sol_db) as db:
        res = sol.compute(db, peaks_file=str(peaks))
    flagged = res.run[res.run["pct_of_empirical"] > 100]
    assert len(flagged) and (flagged["empirical_note"] != "").all()
    assert (res.run[res.run["pct_of_empirical"] <= 100]["empirical_note"] == "").all()


def test_empirical_note_above_the_hardware_peak_too():
    note = sol.empirical_note(1.2e15, 1.0e15, 0.9e15, "FLOP/s")
    assert note.startswith("above the hardware's peak too (the kernels ran at 1.2 PFLOP/s, 120 %")
    assert sol.empirical_note(0.5e15, 1.0e15, 0.9e15, "FLOP/s") == ""
    assert "rocprof peaks --force" in sol.empirical_note(2e12, math.nan, 1e12, "B/s")
