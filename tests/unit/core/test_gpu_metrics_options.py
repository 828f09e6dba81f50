"""GPU metrics over time (--gpu-metrics, CUPTI PM sampling) without a GPU: the options reach the
native settings and their text form, a bad rate is one line, a machine without a sampler says so
in one line and the program runs, and the metric set chosen per chip comes from CUPTI's own
PM-sampling tables (the real libcupti host API, no device): a chip without a metric leaves it out
with the reason."""

from __future__ import annotations

import json

import pytest
from rocprof import _core, backends
from rocprof.capture import gpu_metrics
from rocprof.cli import build_parser
from rocprof.cli.run import options_from, split_argv
from support import run_rocprof


def _tables() -> str:
    if not hasattr(_core, "gpu_metrics_set"):
        return "this build has no CUPTI PM sampling"
    try:
        _core.gpu_metrics_set("GH100")
    except RuntimeError as e:
        return str(e)
    return ""


NO_TABLES = _tables()
needs_tables = pytest.mark.skipif(bool(NO_TABLES), reason=f"CUPTI's tables unavailable: {NO_TABLES}")


def _options(*argv):
    own, _ = split_argv([*argv, "train.py"])
    return options_from(build_parser().parse_args(["run", *own]))


def test_options_fill_the_settings_and_their_text_form():
    s = _core.CaptureSettings()
    gpu_metrics.fill(_options("--gpu-metrics"), s)
    assert (s.gpu_metrics.hz, s.gpu_metrics.set) == (_core.GpuMetricsSettings.DEFAULT_HZ, "default")
    s = _core.CaptureSettings()
    o = _options("--gpu-metrics-frequency", "20000", "--gpu-metrics-set", "memory")
    assert "gpu_metrics" in o.activities() and "kernels" in o.activities()
    gpu_metrics.fill(o, s)
    assert (s.gpu_metrics.hz, s.gpu_metrics.set) == (20000, "memory")
    back = _core.CaptureSettings.from_text(s.to_text())
    assert (back.gpu_metrics.hz, back.gpu_metrics.set) == (20000, "memory")
    s = _core.CaptureSettings()
    gpu_metrics.fill(_options(), s)
    assert s.gpu_metrics.hz == 0 and "gpu_metrics" not in _options().activities()


def test_a_bad_rate_is_one_line_naming_the_option():
    with pytest.raises(ValueError, match=r"^--gpu-metrics-frequency must be between 1 and 200000"):
        gpu_metrics.fill(_options("--gpu-metrics-frequency", "0"), _core.CaptureSettings())
    s = _core.CaptureSettings()
    s.gpu_metrics.hz = 300000
    with pytest.raises(ValueError, match="--gpu-metrics-frequency must be between"):
        s.validate()


def test_info_lists_both_samplers_and_amd_as_unrun():
    rows = {s["name"]: s for s in backends.statuses()}
    assert "cupti-pm-sampling" in rows
    amd = rows["rocprofiler-sdk-device-counting"]
    # Compiled only where rocprofiler-sdk's headers are (make sdk-compile-check); either way it
    # says it has never run on AMD hardware.
    assert "never run on AMD hardware" in amd["reason"]
    if not amd["compiled"]:
        assert "no rocprofiler-sdk headers at build time" in amd["reason"]


@pytest.mark.skipif(bool(backends._status("cupti-pm-sampling")["live"]),
                    reason="a PM sampler is live here: the run samples")
def test_without_a_sampler_one_line_says_so_and_the_program_runs(tmp_path):
    script = tmp_path / "p.py"
    script.write_text("print('program ran')\n")
    r = run_rocprof("run", "-d", str(tmp_path), "--gpu-metrics", str(script))
    assert r.returncode == 0, r.stderr
    assert "program ran" in r.stdout
    lines = [ln for ln in r.stderr.splitlines() if "--gpu-metrics" in ln]
    assert len(lines) == 1 and "no GPU metrics sampler is live here" in lines[0], r.stderr


@needs_tables
def test_the_set_per_chip_comes_from_cuptis_tables():
    gh = _core.gpu_metrics_set("GH100", "default")
    keys = [m["key"] for m in gh["metrics"]]
    assert keys[:3] == ["pm_tensor_active", "pm_sm_active", "pm_sm_issue"]
    assert {"pm_dram_read", "pm_dram_write", "pm_l2_hit_rate", "pm_nvlink_rx"} <= set(keys)
    assert gh["left_out"] == []
    units = {m["key"]: m["units"] for m in gh["metrics"]}
    assert units["pm_dram_read_bytes"] == "B/s" and units["pm_tensor_active"] == "%"
    names = {m["key"]: m["cupti_name"] for m in gh["metrics"]}
    assert names["pm_dram_read"] == "dram__bytes_read.sum.pct_of_peak_sustained_elapsed"
    # GB100 has no PCIe throughput metric.
    left = _core.gpu_metrics_set("GB100")["left_out"]
    assert any(line.startswith("pm_pcie_read: GB100 has no PM-sampling metric") for line in left)
    # An Ada chip has no NVLink.
    assert "pm_nvlink_rx" not in {m["key"] for m in _core.gpu_metrics_set("AD102")["metrics"]}


@needs_tables
def test_avail_prints_the_set_and_what_it_leaves_out():
    r = run_rocprof("avail", "--chip", "AD102", "--gpu-metrics", "memory")
    assert r.returncode == 0, r.stderr
    assert "chip AD102: --gpu-metrics-set memory samples" in r.stdout
    assert "left out pm_nvlink_rx: AD102 has no PM-sampling metric nvlrx__bytes" in r.stdout
    r = run_rocprof("avail", "--chip", "GH100", "--gpu-metrics", "sm__cycles_active.avg,nope__x.sum",
                    "--json")
    (found,) = json.loads(r.stdout)
    assert [m["cupti_name"] for m in found["metrics"]] == ["sm__cycles_active.avg"]
    assert found["left_out"] == ["nope__x.sum: GH100 has no PM-sampling metric nope__x.sum"]


def test_a_ctl_window_can_add_gpu_metrics_at_the_default_rate():
    from rocprof.cli.ctl import window_settings

    args = build_parser(only="ctl").parse_args(["ctl", "start", "--gpu-metrics"])
    lines = window_settings(args)
    assert f"gpu_metrics.hz={_core.GpuMetricsSettings.DEFAULT_HZ}" in lines
    assert "cupti.kernels=1" in lines  # sampled beside kernel tracing
    back = _core.CaptureSettings.from_text("\n".join(lines))
    assert back.gpu_metrics.hz == _core.GpuMetricsSettings.DEFAULT_HZ
