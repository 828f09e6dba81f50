"""The options of a `rocprof ctl start` / `rocprof attach` window are rows of the run's option
table (option_table.py, `window`): the same names and help as `rocprof run`, and the settings a
window sends are worked out from the rows' activities."""

from __future__ import annotations

import argparse

import pytest
from rocprof import _core
from rocprof import option_table as table
from rocprof.cli import build_parser
from rocprof.cli.ctl import window_flags, window_settings
from rocprof.cli.run_parser import RATE_RULE


def _helps(command: str) -> dict[str, str]:
    sub = build_parser(only=command)._subparsers._group_actions[0].choices[command]
    return {a.option_strings[-1]: a.help for a in sub._actions
            if a.option_strings and a.help != argparse.SUPPRESS}


def _window(*argv: str):
    return build_parser(only="ctl").parse_args(["ctl", "start", *argv])


def test_memory_copy_trace_asks_for_copies_and_sets():
    lines = window_settings(_window("--memory-copy-trace"))
    assert {"cupti.copies=1", "cupti.sets=1", "hsa.copies=1"} <= set(lines), lines
    assert not any("kernels" in line for line in lines), lines


def test_sys_trace_asks_for_every_activity_a_gpu_backend_has():
    lines = set(window_settings(_window("-s")))
    assert {f"cupti.{a}=1" for a in _core.CuptiSettings.SUPPORTED} <= lines
    assert {f"hsa.{a}=1" for a in _core.HsaSettings.SUPPORTED} <= lines


def test_sample_without_a_rate_takes_the_cores_default():
    assert window_settings(_window("--sample")) == [
        f"sampling.hz={_core.SamplingSettings.DEFAULT_HZ}"]
    assert window_settings(_window("--sample", "250")) == ["sampling.hz=250"]
    assert window_settings(_window()) == []


@pytest.mark.parametrize("command", ["ctl", "attach"])
def test_each_window_option_is_the_run_options_row_with_its_help(command):
    run, window = _helps("run"), _helps(command)
    rows = table.window_options()
    assert rows, "no row of the option table is marked for windows"
    for option in rows:
        name = option.names[-1]
        # A rate's rule for the word after it is about the program: run's alone.
        assert window.get(name) == run[name].removesuffix(f". {RATE_RULE}"), name
    # No window option of its own beside the table's (--duration, --timeout are ctl's verbs').
    tracing = {n for n in window if table.by_name(n) is not None and table.by_name(n).activities}
    assert tracing == {o.names[-1] for o in rows}


def test_attach_names_the_gpu_options_given():
    args = build_parser(only="attach").parse_args(["attach", "1", "--memory-copy-trace", "-s"])
    assert window_flags(args) == ["--memory-copy-trace", "--sys-trace"]
