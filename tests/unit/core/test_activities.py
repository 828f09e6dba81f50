"""One activity vocabulary from the command line to the backends: the activities are defined
once (cpp/capture/activity.hpp, seen as rocprof._core.Activity), the options of `rocprof run`
come from one table (rocprof/option_table.py) that names the activities each asks for, and each
backend's typed settings carry the activities it records under the same names."""

from __future__ import annotations

import argparse

import pytest
from rocprof import _core, backends, option_table
from rocprof.cli import rocprofv3_options as v3
from rocprof.cli import run as run_cli

NAMES = [name for name, _ in _core.activities()]


def _options(*argv):
    p = argparse.ArgumentParser()
    run_cli.add_parser(p)
    return run_cli.options_from(p.parse_args(list(argv)))


def test_the_vocabulary_is_defined_once_and_seen_from_python():
    assert NAMES == list(_core.Activity.__members__)
    assert {"kernels", "copies", "sets", "allocations", "runtime_api", "driver_api", "sync",
            "markers", "counters", "samples", "metrics"} <= set(NAMES)
    for option in option_table.OPTIONS:
        assert set(option.activities) <= set(NAMES), option.names
    for b in backends.BACKENDS:
        assert set(b.activities) <= set(NAMES), b.name


def test_the_table_generates_the_parser_and_the_argv_split_sets():
    p = argparse.ArgumentParser()
    run_cli.add_parser(p)
    declared = {s for a in p._actions for s in a.option_strings} | {
        a.dest for a in p._actions if not a.option_strings}
    table = {n for o in option_table.OPTIONS for n in o.names}
    assert declared - {"-h", "--help", "--help-all"} == table
    assert run_cli._VALUED == option_table.names("value") and "-d" in run_cli._VALUED
    assert run_cli._BOOLS == option_table.names("bool") and "--sys-trace" in run_cli._BOOLS
    assert run_cli.split_argv(["--sys-trace", "false", "-d", "out", "app.py", "-d"]) == (
        ["--sys-trace", "false", "-d", "out"], ["app.py", "-d"])


def test_input_file_keys_name_the_tables_options():
    assert v3.job_argv({"kernel_trace": True, "output_directory": "o", "pmc": ["A", "B"]}) == [
        "--kernel-trace=true", "--output-directory", "o", "--pmc", "A", "B"]


@pytest.mark.parametrize("argv, wanted", [
    ((), {"markers", "kernels", "copies", "sets"}),
    # rocprofv3: --runtime-trace and --sys-trace include the collective calls (--rccl-trace).
    (("--runtime-trace",), {"markers", "runtime_api", "driver_api", "sync", "collectives"}),
    (("--rccl-trace",), {"markers", "kernels", "copies", "sets", "collectives"}),
    (("--nccl-trace", "--kernel-trace"), {"markers", "kernels", "collectives"}),
    (("--memory-allocation-trace", "--hip-trace"), {"markers", "allocations", "hip_api"}),
    (("--sys-trace",), set(option_table.SYS_TRACE)),
    (("--sample", "--process-freq", "5", "--kernel-trace=false", "--hsa-trace"),
     {"markers", "samples", "metrics", "hsa_api"}),
])
def test_options_name_the_activities_they_ask_for(argv, wanted):
    assert _options(*argv).activities() == wanted


def test_each_gpu_backend_records_the_activities_it_supports_under_the_same_names():
    from rocprof.capture import cupti, hsa

    o = _options("--runtime-trace", "--memory-copy-trace")
    s = _core.CaptureSettings()
    cupti.configure(o, s)
    assert s.cupti.activities == ["copies", "sets", "runtime_api", "driver_api", "sync"]
    hsa.configure(o, s)
    # runtime_api is HIP's API on AMD: hsa_backend.cpp maps it; HSA has no separate sets.
    assert s.hsa.activities == ["copies", "runtime_api"]
    text = s.to_text()
    assert "cupti.sets=1" in text and "cupti.kernels=0" in text and "hsa.runtime_api=1" in text
    assert _core.CaptureSettings.from_text(text).cupti.activities == s.cupti.activities


def test_a_backend_refuses_an_activity_it_cannot_record():
    s = _core.CaptureSettings()
    with pytest.raises(ValueError, match="activity 'hsa_api' is not one this backend records"):
        s.cupti.activities = ["kernels", "hsa_api"]
    with pytest.raises(ValueError, match="unknown setting"):
        _core.CaptureSettings.from_text("hsa.sets=1")
    assert set(_core.CuptiSettings.SUPPORTED) >= {"kernels", "copies", "sets", "sync"}
