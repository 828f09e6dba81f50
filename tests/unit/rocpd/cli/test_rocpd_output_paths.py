"""Every file a `rocpd` command writes is named by its absolute path (`wrote /abs/...`), whatever
relative path it was given; what could not be written is said on stderr, not only in a page."""

from __future__ import annotations

import os
import re


def _wrote(stdout: str) -> list[str]:
    return re.findall(r"^wrote (.+)$", stdout, flags=re.M)


def test_outputs_are_printed_absolute(tmp_path, monkeypatch, cli, make_run):
    make_run(tmp_path / "run_results.db")
    monkeypatch.chdir(tmp_path)
    os.mkdir("out")
    commands = [
        (["convert", "run_results.db", "-f", "chrome", "-o", "out/trace.json"], ["out/trace.json"]),
        (["convert", "run_results.db", "-f", "csv", "-o", "out/csv/run"], None),
        (["convert", "-i", "run_results.db", "-f", "pftrace", "-d", "out/rocm", "-o", "r"],
         ["out/rocm/r_results.pftrace"]),
        # an OTF2 archive's name cannot hold a folder: one given in -o goes under -d
        (["convert", "-i", "run_results.db", "-f", "otf2", "-d", "out", "-o", "sub/r"],
         ["out/sub/r_results.otf2"]),
        (["summary", "run_results.db", "--csv", "out/sum"], None),
        (["merge", "run_results.db", "-o", "out/merged.db"], ["out/merged.db"]),
        (["query", "run_results.db", "--sql", "SELECT 1 AS one", "-f", "csv", "-o", "out/q.csv"],
         ["out/q.csv"]),
        (["report", "run_results.db", "-o", "out/report.html"],
         ["out/report.html", "out/report.pftrace"]),
    ]
    for argv, expected in commands:
        rc, out, err = cli(*argv)
        assert rc == 0, (argv, err)
        written = _wrote(out)
        assert written and all(os.path.isabs(p) and os.path.exists(p) for p in written), (argv, out)
        if expected is not None:
            assert written == [str(tmp_path / p) for p in expected], (argv, out)


def test_report_says_on_stderr_when_the_perfetto_trace_cannot_be_written(tmp_path, monkeypatch,
                                                                         cli, make_run):
    make_run(tmp_path / "run_results.db")
    monkeypatch.chdir(tmp_path)
    os.mkdir("report.pftrace")  # a folder where the trace would go: it cannot be written
    rc, out, err = cli("report", "run_results.db", "-o", "report.html")
    assert rc == 0, err
    assert _wrote(out) == [str(tmp_path / "report.html")]
    assert err.startswith("rocpd report: no Perfetto trace written: ") and err.count("\n") == 1, err


def test_an_output_naming_a_folder_gets_rocprofv3s_file_name_inside_it(tmp_path, monkeypatch,
                                                                       cli, make_run):
    """`-o traces/` (a folder, new or not) and `-o existing_folder`: the file goes inside, named
    as rocprofv3 names it with no -o; missing parent folders of a file are made."""
    make_run(tmp_path / "run_results.db")
    monkeypatch.chdir(tmp_path)
    os.mkdir("there")
    commands = [
        (["-f", "perfetto", "-o", "new/"], "new/results.pftrace"),
        (["-f", "chrome", "-o", "there"], "there/results.json"),
        (["-f", "chrome", "-o", "deep/er/t.json"], "deep/er/t.json"),
        (["-f", "csv", "-o", "csvs/"], None),
    ]
    for argv, expected in commands:
        rc, out, err = cli("convert", "run_results.db", *argv)
        assert rc == 0, (argv, err)
        written = _wrote(out)
        assert written, (argv, out)
        if expected is not None:
            assert written == [str(tmp_path / expected)] and os.path.isfile(expected), (argv, out)
        else:
            assert all(os.path.basename(p).startswith("results_") for p in written), out
    assert not os.path.isfile("new") and not os.path.isfile("there")


def test_a_single_file_output_given_a_folder_is_refused_before_anything_is_written(
        tmp_path, monkeypatch, cli, make_run):
    """report, query and merge write one named file: `-o out/` or an existing folder is a
    one-line error, exit 1, and nothing is written (no file named like the folder, no trace)."""
    make_run(tmp_path / "run_results.db")
    monkeypatch.chdir(tmp_path)
    os.mkdir("there")
    for argv in (["report", "run_results.db", "-o", "out/"],
                 ["report", "run_results.db", "-o", "there"],
                 ["query", "run_results.db", "--sql", "SELECT 1", "-f", "csv", "-o", "q/"],
                 ["merge", "run_results.db", "-o", "m/"]):
        rc, out, err = cli(*argv)
        assert rc == 1 and "names a folder; give a file name in it" in err, (argv, err)
        assert err.count("\n") == 1, err
    assert sorted(os.listdir(".")) == ["run_results.db", "there"]
    assert os.listdir("there") == []
