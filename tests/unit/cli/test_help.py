"""`rocprof` help that teaches: every option described with its real default, examples in every
subcommand's help that parse as written, one visible spelling per option, and errors that point
at the subcommand's own help."""

from __future__ import annotations

import argparse

import pytest
from rocprof import _core, option_table
from rocprof.cli import SUBCOMMANDS, build_parser
from rocprof.cli.help_text import example_commands
from rocprof.cli.run import options_from, split_argv
from support import run_rocpd, run_rocprof


def _subparsers(parser):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def _options(parser):
    return [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS]


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_option_has_help_stating_its_default(name):
    sub = _subparsers(build_parser())[name]
    fmt = sub._get_formatter()
    for action in _options(sub):
        text = fmt._expand_help(action) if action.help else ""
        assert len(text) > 10, f"rocprof {name} {action.option_strings}: no help"
        default = action.default
        if default in (None, False, True, [], argparse.SUPPRESS):
            continue  # nothing to state: off, or a flag
        assert "default" in text and str(default) in text, \
            f"rocprof {name} {action.option_strings}: default {default!r} not stated: {text}"
    assert "SamplingSettings" not in sub.format_help() and "MetricsSettings" not in sub.format_help()


def test_rates_without_a_value_show_the_cores_numbers():
    text = " ".join(_subparsers(build_parser())["run"].format_help().split())
    assert f"without HZ: {_core.SamplingSettings.DEFAULT_HZ};" in text
    assert f"without HZ: {_core.MetricsSettings.DEFAULT_HZ};" in text
    assert f"at most {_core.MetricsSettings.MAX_HZ}" in text


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_subcommand_has_examples_that_parse(name):
    parser = build_parser()
    sub = _subparsers(parser)[name]
    examples = example_commands(sub.epilog or "", "rocprof")
    assert examples, f"rocprof {name} --help has no examples"
    for argv in examples:
        assert argv[0] == name, argv
        if name == "run":
            own, target = split_argv(argv[1:])
            args = parser.parse_args(["run", *own])
            args.target = target
            options_from(args)
            assert target, f"{argv}: no program to run"
        else:
            parser.parse_args(argv)
    top = example_commands(parser.epilog, "rocprof")
    assert {a[0] for a in top} >= {"run", "info", "completion"}


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_one_visible_spelling_per_option(name):
    sub = _subparsers(build_parser())[name]
    dests = [a.dest for a in _options(sub)]
    assert len(dests) == len(set(dests)), sorted(d for d in dests if dests.count(d) > 1)


def test_an_unknown_output_format_is_named_as_one(tmp_path):
    """-f's first value, and a bare word after a known format that names no file or command,
    are formats: a misspelt one is an invalid choice, not a missing program."""
    script = tmp_path / "s.py"
    script.write_text("")
    for words in (["xlsx"], ["csv", "xlsx"], ["XLSX"]):
        r = run_rocprof("run", "-d", tmp_path, "-f", *words, script)
        assert r.returncode == 2, r.stderr
        bad = words[-1]
        assert r.stderr.startswith(f"rocprof run: argument -f/--output-format: invalid choice: "
                                   f"'{bad}' (choose from "), r.stderr
    own, target = split_argv(["-f", "csv", "ls", "-l"])  # a command on PATH stays the target
    assert (own, target) == (["-f", "csv"], ["ls", "-l"])


def test_a_word_after_sample_that_names_no_program_is_a_bad_rate(tmp_path, monkeypatch):
    """A word after a rate option that is not a whole number is the program only where it names
    one: else it is refused as HZ, not run (or called a missing program)."""
    r = run_rocprof("run", "-d", tmp_path, "--sample", "abc", "--", "python3", "x.py")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == ("rocprof run: argument --sample: HZ must be a whole number, not "
                                "'abc'; a program right after it must name a file or a command on "
                                "PATH (see 'rocprof run --help')"), r.stderr
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train").write_text("")
    assert split_argv(["--sample", "1k", "x.py"]) == (["--sample", "1k"], ["x.py"])
    assert split_argv(["--process-freq", "abc", "--", "ls"]) == (["--process-freq", "abc"], ["--", "ls"])
    for program in ("train", "train.py", "ls", "./app", "500x/app"):
        assert split_argv(["--sample", program, "-v"]) == (["--sample"], [program, "-v"])
    assert split_argv(["--sample", "500", "ls"]) == (["--sample", "500"], ["ls"])


def test_bare_rocprof_and_rocpd_print_their_help_and_succeed():
    for r, name in ((run_rocprof(), "rocprof"), (run_rocpd(), "rocpd")):
        assert r.returncode == 0, (name, r.stderr)
        assert r.stdout.startswith(f"usage: {name}") and "COMMAND" in r.stdout, r.stdout


def test_unknown_option_points_at_the_subcommands_help():
    r = run_rocprof("run", "--bogus", "x.py")
    assert r.returncode == 2
    assert r.stderr.strip() == ("rocprof run: unrecognized arguments: --bogus (see 'rocprof run "
                                "--help')"), r.stderr
    r = run_rocprof("run", "--sys-tarce", "x.py")
    assert "did you mean --sys-trace?" in r.stderr and "'rocprof run --help'" in r.stderr
    r = run_rocprof("info", "--jsn")
    assert r.returncode == 2 and "(see 'rocprof info --help')" in r.stderr, r.stderr


def test_help_prints_examples():
    r = run_rocprof("run", "--help-all")
    assert r.returncode == 0
    assert "examples:\n  rocprof run train.py" in r.stdout
    assert "--sampling-mode {cpu,wall}" in r.stdout and "cpu (default)" in r.stdout


def test_run_help_is_one_screen_and_help_all_has_every_option():
    brief = run_rocprof("run", "--help")
    assert brief.returncode == 0 and len(brief.stdout.splitlines()) <= 60, brief.stdout
    assert "examples:\n  rocprof run train.py" in brief.stdout
    assert "--sys-trace" in brief.stdout and "--sampling-mode" not in brief.stdout
    hidden = sum(1 for o in option_table.OPTIONS if not o.common)
    assert f"{hidden} more options: rocprof run --help-all" in brief.stdout
    full = run_rocprof("run", "--help-all")
    assert full.returncode == 0
    for option in option_table.OPTIONS:
        assert option.names[-1] in full.stdout, option.names
    # Completion still offers the options --help leaves out.
    bash = run_rocprof("completion", "bash").stdout
    assert "--sampling-mode" in bash
