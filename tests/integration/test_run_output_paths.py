"""`rocprof run` names every file it wrote by its absolute path, and an export format that
cannot be written says so in one line while the others are still written."""

from __future__ import annotations

import os
import re

from support import WORKLOADS, run_rocprof


def _named(stderr: str) -> list[str]:
    return re.findall(r"^rocprof: (?:results written to|stats written to|written|summary written "
                      r"to) (.+)$", stderr, flags=re.M)


def test_every_written_file_is_named_absolute(tmp_path):
    r = run_rocprof("run", "-d", "rel", "-o", "x", "--stats", "-S", "--summary-output-file",
                    "sum.txt", "-f", "csv", "json", "pftrace", "otf2", "--",
                    WORKLOADS / "exit_with.py", "code", "0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    named = _named(r.stderr)
    assert named[0] == str(tmp_path / "rel" / "x_results.db"), r.stderr
    assert str(tmp_path / "sum.txt") in named
    for suffix in ("_results.json", "_results.pftrace", "_marker_api_stats.csv"):
        assert str(tmp_path / "rel" / f"x{suffix}") in named, (suffix, r.stderr)
    assert all(os.path.isabs(p) and os.path.exists(p) for p in named), r.stderr


def test_a_format_that_cannot_be_written_is_said_and_the_others_are_written(tmp_path):
    (tmp_path / "x_results.pftrace").mkdir()  # a folder where the trace would go
    r = run_rocprof("run", "-d", tmp_path, "-o", "x", "-f", "csv", "pftrace", "json", "--",
                    WORKLOADS / "exit_with.py", "code", "3")
    assert r.returncode == 3, r.stderr  # the program's own status, whatever the exports did
    failed = [line for line in r.stderr.splitlines() if "stopped" in line or "failed" in line]
    assert failed == [f"rocprof: -f pftrace of {tmp_path / 'x_results.db'} stopped: cannot write "
                      f"{tmp_path / 'x_results.pftrace'}: this names a folder; give a file name in "
                      "it"], r.stderr
    assert "summary failed" not in r.stderr
    assert (tmp_path / "x_results.json").stat().st_size > 0
    assert str(tmp_path / "x_results.json") in _named(r.stderr)
    assert any(p.endswith(".csv") for p in _named(r.stderr)), r.stderr


def test_relative_paths_are_those_of_the_start_when_the_script_changes_folder(tmp_path):
    script = tmp_path / "wanders.py"
    script.write_text("import os, sys\nos.chdir(sys.argv[1])\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_rocprof("run", "-d", "rel", "-o", "w", "--stats", "-S", "--summary-output-file",
                    "sum.txt", script, elsewhere, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    named = _named(r.stderr)
    assert named[0] == str(tmp_path / "rel" / "w_results.db"), r.stderr
    assert str(tmp_path / "sum.txt") in named and (tmp_path / "sum.txt").stat().st_size > 0
    assert all(p.startswith(str(tmp_path / "rel")) for p in named if p.endswith(".csv")), r.stderr
    assert not list(elsewhere.iterdir())


def test_an_absolute_output_name_is_the_path_and_leaves_the_folder_out(tmp_path):
    """As rocprofv3's -d/-o join: an absolute -o replaces the folder (here for the command's
    process, the first that records)."""
    target = tmp_path / "out dir" / "run 1"
    r = run_rocprof("run", "-d", "unused", "-o", target, "-f", "csv", "--", "python3",
                    WORKLOADS / "exit_with.py", "code", "4", cwd=tmp_path)
    assert r.returncode == 4, r.stderr
    named = _named(r.stderr)
    db = [p for p in named if p.endswith("_results.db")]
    assert db == [f"{target}_results.db"], r.stderr
    assert any(p.startswith(f"{target}_") and p.endswith(".csv") for p in named), r.stderr
    assert not (tmp_path / "unused").exists()


def test_paths_with_dot_dot_are_named_normalised(tmp_path):
    """-o ../x and -d a/../b name the files as os.path.normpath would (links not resolved), and
    no folder is made only to be left by the "..": the default folder's host, `a`."""
    work = tmp_path / "work"
    work.mkdir()
    r = run_rocprof("run", "-o", "../x", "--stats", "--", WORKLOADS / "exit_with.py", "code", "0",
                    cwd=work)
    assert r.returncode == 0, r.stderr
    named = _named(r.stderr)
    assert named[0] == str(work / "rocprof-output" / "x_results.db"), r.stderr
    assert all(".." not in p.split(os.sep) for p in named), r.stderr
    assert (work / "rocprof-output" / "x_results.db").exists()
    assert not [p for p in (work / "rocprof-output").iterdir() if p.is_dir()]
    r = run_rocprof("run", "-d", "./a/../b", "-o", "y", "--", WORKLOADS / "exit_with.py", "code",
                    "0", cwd=work)
    assert r.returncode == 0, r.stderr
    assert _named(r.stderr) == [str(work / "b" / "y_results.db")], r.stderr
    assert not (work / "a").exists()


def test_a_summary_file_named_as_a_folder_is_refused_before_the_program_runs(tmp_path):
    (tmp_path / "there").mkdir()
    for target in ("sums/", "there"):
        r = run_rocprof("run", "-d", "rel", "-o", "x", "-S", "--summary-output-file", target,
                        WORKLOADS / "exit_with.py", "code", "0", cwd=tmp_path)
        assert r.returncode != 0 and "names a folder; give a file name in it" in r.stderr, r.stderr
        assert not (tmp_path / "rel").exists() and not (tmp_path / "sums").exists()
