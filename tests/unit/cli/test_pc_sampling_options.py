"""rocprof run's PC-sampling options (rocprofv3's names) down to the native settings, and what a
machine without a PC sampler says."""

from __future__ import annotations

import pytest
from rocprof import _core
from rocprof.cli import build_parser
from rocprof.cli.run import options_from, split_argv


def options(*argv):
    own, target = split_argv(list(argv))
    args = build_parser().parse_args(["run", *own])
    args.target = target
    return options_from(args)


def test_rocprofv3_spelling_turns_it_on_with_kernels():
    o = options("--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap",
                "--pc-sampling-unit", "time", "--pc-sampling-interval", "10", "--", "./app")
    assert (o.pc_sampling, o.pc_sampling_method, o.pc_sampling_unit, o.pc_sampling_interval) == (
        True, "host_trap", "time", 10)
    assert "kernels" in o.activities()  # samples are shared out over traced kernels
    assert "pc_samples" in o.activities()
    assert "pc_samples" not in options("--", "./app").activities()


def test_defaults_and_off():
    o = options("--pc-sampling", "--", "./app")
    assert (o.pc_sampling_method, o.pc_sampling_unit, o.pc_sampling_interval) == (
        "stochastic", "cycles", 0)
    assert options("--", "./app").pc_sampling is False
    # Any --pc-sampling-* option alone asks for PC sampling.
    assert options("--pc-sampling-interval", "4096", "--", "./app").pc_sampling


def test_bad_interval_is_a_one_line_error():
    from rocprof.cli import UsageError

    with pytest.raises(UsageError, match="--pc-sampling-interval must be a positive number"):
        options("--pc-sampling-interval", "0", "--", "./app")


def test_native_settings_round_trip_and_validate():
    s = _core.CaptureSettings()
    s.pc_sampling.enabled = True
    s.pc_sampling.unit = "time"
    s.pc_sampling.interval = 5
    s.validate()
    # Native programs (rocprof run -- ./app) get the same settings as text.
    text = s.to_text().splitlines()
    assert {"pc_sampling.enabled=1", "pc_sampling.unit=time", "pc_sampling.interval=5"} <= set(text)
    s.pc_sampling.unit = "bogus"
    with pytest.raises(ValueError, match="--pc-sampling-unit must be instructions, cycles or time"):
        s.validate()


def test_info_names_both_pc_samplers():
    from rocprof import backends

    assert backends.get("cupti-pc-sampling").activities == ("pc_samples",)
    by = {s["name"]: s for s in backends.statuses()}
    assert "cupti-pc-sampling" in by
    amd = by["rocprofiler-sdk-pc-sampling"]
    assert not amd["live"] and "not run on AMD hardware" in amd["reason"]
    assert "rocprofiler-sdk" in amd["reason"]


def test_no_live_sampler_is_said_in_one_note(monkeypatch):
    from rocprof import backends

    real = backends._status

    def without_pc(name):
        s = real(name)
        return dict(s, live=False, reason="no NVIDIA driver") if name == "cupti-pc-sampling" else s

    monkeypatch.setattr(backends, "_status", without_pc)
    o = options("--pc-sampling", "--", "./app")
    _, notes = backends.configure(o)
    pc = [n for n in notes if n.startswith("--pc-sampling")]
    assert len(pc) == 1 and "no NVIDIA driver" in pc[0] and "no PC samples will be recorded" in pc[0]
