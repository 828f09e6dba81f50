"""Typed capture settings (cpp/capture/settings.hpp): built once, validated with one line
naming the option, and one text form that native programs read back identically."""

from __future__ import annotations

import pytest
from rocprof import _core, backends
from rocprof.options import Options


def test_defaults_are_stated_once():
    s = _core.CaptureSettings()
    assert s.cupti.enabled is False and "kernels" in s.cupti.activities and s.cupti.flush_ms == 250
    assert s.sampling.hz == 0 and _core.SamplingSettings.DEFAULT_HZ == 1000


def test_validation_names_the_option():
    s = _core.CaptureSettings()
    s.kernel_names.include = "gemm_("
    with pytest.raises(ValueError, match=r"--trace-kernel-include-regex 'gemm_\(':"):
        s.validate()
    s = _core.CaptureSettings()
    s.cupti.callbacks = "sometimes"
    with pytest.raises(ValueError, match="cupti.callbacks must be none, launch or all"):
        s.validate()


def test_text_form_round_trips():
    s = _core.CaptureSettings()
    s.cupti.enabled = True
    s.cupti.activities = ["kernels", "sync"]
    s.kernel_names.exclude = "^nccl"
    s.sampling.hz = 250
    s.sampling.wall = True
    back = _core.CaptureSettings.from_text(s.to_text())
    assert back.to_text() == s.to_text()
    assert back.kernel_names.exclude == "^nccl" and back.sampling.hz == 250 and back.sampling.wall
    assert back.cupti.activities == ["kernels", "sync"]


def test_text_form_rejects_unknown_keys_in_one_line():
    with pytest.raises(ValueError, match="cupti.kernal=1.*unknown setting"):
        _core.CaptureSettings.from_text("cupti.kernal=1")
    with pytest.raises(ValueError, match="expected 0 or 1"):
        _core.CaptureSettings.from_text("cupti.kernels=maybe")


def test_launcher_options_become_settings():
    o = Options(sample=123, sampling_mode="wall")
    settings, _ = backends.configure(o)
    assert settings.sampling.hz == 123 and settings.sampling.wall
    # the launcher's code file as its frames name it, found without importing the command line
    from rocprof.cli import target

    assert settings.sampling.launcher_file == target.run_target.__code__.co_filename


@pytest.mark.parametrize("pattern", [r"gemm_\d+", "(?i)gemm", "a*?", r"\bconv"])
def test_capture_refuses_what_the_cli_and_rocpd_refuse(pattern):
    """One dialect: a pattern the CLI's check (rocpd.regex) refuses, the native settings refuse
    too, so rocprof.profile(kernel_include_regex=...) cannot slip past it."""
    from rocpd import regex

    with pytest.raises(ValueError):
        regex.compile(pattern)
    s = _core.CaptureSettings()
    s.kernel_names.include = pattern
    with pytest.raises(ValueError, match="POSIX extended syntax"):
        s.validate()


@pytest.mark.parametrize("pattern", ["gemm_[0-9]+", "^void at::native::", "a{2,3}b", "[[:digit:]]+",
                                     "x|y", "[]a]+"])
def test_capture_accepts_what_rocpd_accepts(pattern):
    from rocpd import regex

    regex.compile(pattern)
    s = _core.CaptureSettings()
    s.kernel_names.include = pattern
    s.validate()


def test_metrics_settings_defaults_text_form_and_validation():
    s = _core.CaptureSettings()
    assert s.metrics.hz == 0 and (s.metrics.gpus, s.metrics.cpus) == ("all", "all")
    assert (_core.MetricsSettings.DEFAULT_HZ, _core.MetricsSettings.MAX_HZ) == (20, 1000)
    s.metrics.hz = 50
    s.metrics.gpus = "0,2-3"
    s.metrics.cpus = "none"
    back = _core.CaptureSettings.from_text(s.to_text())
    assert (back.metrics.hz, back.metrics.gpus, back.metrics.cpus) == (50, "0,2-3", "none")
    s.metrics.gpus = "3-1"
    with pytest.raises(ValueError, match=r"--gpus '3-1': expected all, none or a list like 0,2-3"):
        s.validate()
    s.metrics.gpus = "all"
    s.metrics.hz = 1001
    with pytest.raises(ValueError, match="--process-freq must be between 1 and 1000 Hz, not 1001"):
        s.validate()


def test_process_freq_option_becomes_metrics_settings():
    settings, notes = backends.configure(Options(process_freq=10, gpus="1", cpus="0-1"))
    assert (settings.metrics.hz, settings.metrics.gpus, settings.metrics.cpus) == (10, "1", "0-1")
    assert notes == []
    settings, _ = backends.configure(Options())
    assert settings.metrics.hz == 0


@pytest.mark.parametrize("values, hz, energy_hz", [
    ({"energy": True}, 0, 100),                        # --energy alone: its own rate, nothing else
    ({"energy": True, "process_freq": 20}, 20, 100),   # the other metrics at theirs
    ({"energy": True, "process_freq": 500}, 500, 500),  # --process-freq's when higher
    ({"process_freq": 20}, 20, 0),                     # energy as one of its metrics
])
def test_energy_option_becomes_metrics_settings(values, hz, energy_hz):
    settings, notes = backends.configure(Options(**values))
    assert (settings.metrics.hz, settings.metrics.energy_hz) == (hz, energy_hz)
    assert _core.MetricsSettings.ENERGY_HZ == 100 and notes == []
    back = _core.CaptureSettings.from_text(settings.to_text())
    assert (back.metrics.hz, back.metrics.energy_hz) == (hz, energy_hz)


def test_kernel_names_are_set_once_for_every_gpu_backend():
    """-T, -M and --trace-kernel-include/exclude-regex fill one section every GPU backend reads;
    --kernel-include/exclude-regex (counters' kernels) stay out of it."""
    o = Options(truncate_kernels=True, trace_kernel_include_regex="^void at::native::",
                trace_kernel_exclude_regex="Fill", kernel_include_regex="gemm",
                kernel_exclude_regex="conv")
    settings, _ = backends.configure(o)
    n = settings.kernel_names
    assert (n.truncate, n.mangled, n.include, n.exclude) == (True, False, "^void at::native::", "Fill")
    back = _core.CaptureSettings.from_text(settings.to_text())
    assert "kernel_names.include=^void at::native::" in settings.to_text().splitlines()
    b = back.kernel_names
    assert (b.truncate, b.mangled, b.include, b.exclude) == (True, False, "^void at::native::", "Fill")
