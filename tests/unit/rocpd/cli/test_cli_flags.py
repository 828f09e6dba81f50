"""The ``rocpd`` command line as ROCm's rocpd users call it: every flag of ROCm's rocpd accepted
with ROCm's meaning, -v/--version, bare ``rocpd``, errors that point at the subcommand's help, and
--start/--end with --inclusive as ROCm's code reads it."""

from __future__ import annotations

import json

import pytest

from rocpd.testing import DatabaseBuilder

T0 = 1_000_000


@pytest.fixture
def edges(tmp_path, monkeypatch):
    """Four kernels around the window [T0+100, T0+200]: one wholly before it, one across its start,
    two wholly inside, one across its end (so 2 inside, 4 overlapping)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "edges.db"
    with DatabaseBuilder(path) as b:
        for name, s, e in (("before", 0, 50), ("across_start", 80, 120), ("inside_a", 110, 150),
                           ("inside_b", 150, 190), ("across_end", 180, 250), ("after", 300, 400)):
            b.kernel(name, T0 + s, T0 + e)
    return str(path)


def test_bare_rocpd_prints_help_and_succeeds(cli):
    rc, out, _ = cli()
    assert rc == 0 and "usage: rocpd" in out and "summary" in out


@pytest.mark.parametrize("flag", ["-v", "--version"])
def test_version(cli, flag):
    import rocpd

    rc, out, _ = cli(flag)
    assert rc == 0 and out.startswith(f"rocpd {rocpd.version_info['version']}")


@pytest.mark.parametrize("sub,args", [
    ("summary", ["x.db"]), ("query", ["x.db", "--sql", "SELECT 1"]), ("convert", ["x.db", "-f", "csv"]),
    ("analyze", ["x.db"]), ("report", ["x.db", "-o", "r.html"]), ("compare", ["x.db", "y.db"])])
def test_unknown_option_points_at_the_subcommands_help(sub, args, capsys):
    from rocpd.cli import main

    with pytest.raises(SystemExit) as e:
        main([sub, *args, "--bogus"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.strip().splitlines() == [
        f"rocpd {sub}: error: unrecognized arguments: --bogus (see `rocpd {sub} --help`)"]


def _kernel_count(cli, db, *extra):
    rc, out, err = cli("query", "-i", db, "--query", "SELECT name FROM kernels ORDER BY start",
                       "--format", "json", "-o", "k", *extra)
    assert rc == 0, err
    return [r["name"] for r in json.load(open("rocpd-output-data/k.json"))]


def test_start_end_default_is_rocms_code_wholly_inside(cli, edges):
    names = _kernel_count(cli, edges, "--start", str(T0 + 100), "--end", str(T0 + 200))
    assert names == ["inside_a", "inside_b"]
    names = _kernel_count(cli, edges, "--start", str(T0 + 100), "--end", str(T0 + 200),
                          "--inclusive", "True")
    assert names == ["inside_a", "inside_b"]


def test_inclusive_false_is_the_documented_overlap(cli, edges):
    names = _kernel_count(cli, edges, "--start", str(T0 + 100), "--end", str(T0 + 200),
                          "--inclusive", "False")
    assert names == ["across_start", "inside_a", "inside_b", "across_end"]


def test_summary_and_python_api_follow_the_same_window(cli, edges):
    import rocpd

    with rocpd.connect(edges) as db:
        inside = db.kernels(start=str(T0 + 100), end=str(T0 + 200))
        overlap = db.kernels(start=str(T0 + 100), end=str(T0 + 200), inclusive=False)
    assert sorted(inside["name"]) == ["inside_a", "inside_b"]
    assert len(overlap) == 4
    rc, out, _ = cli("summary", edges, "--start", str(T0 + 100), "--end", str(T0 + 200))
    assert rc == 0 and "inside_a" in out and "across_end" not in out


def test_inclusive_is_explained_in_help(capsys):
    from rocpd.cli import main

    with pytest.raises(SystemExit):
        main(["query", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "wholly inside" in out and "ROCm's documentation" in out
def test_every_rocm_flag_is_accepted():
    """Every option string of ROCm's rocpd convert/query/summary parses (ROCm's __main__.py and
    the add_args of output_config, pftrace, query, summary, time_window at the mirrored commit)."""
    from rocpd.cli import build_parser

    p = build_parser()
    common = ["-i", "x.db", "-d", "out", "-o", "name", "--start", "10%", "--end", "90%",
              "--inclusive", "False"]
    p.parse_args(["convert", *common, "-f", "csv", "pftrace", "otf2", "--output-format", "csv",
                  "--kernel-rename", "--agent-index-value", "type-relative",
                  "--perfetto-backend", "system", "--perfetto-buffer-fill-policy", "ring_buffer",
                  "--perfetto-buffer-size", "1024", "--perfetto-shmem-size-hint", "64",
                  "--group-by-queue"])
    p.parse_args(["convert", "-i", "x.db", "-f", "csv", "--start-marker", "a", "--end-marker", "b"])
    for fmt in ("console", "csv", "html", "json", "md", "pdf", "dashboard", "clipboard"):
        p.parse_args(["query", *common, "--query", "SELECT 1", "--script", "v.sql",
                      "--format", fmt, "--kernel-rename", "--email-to", "a@b.c,d@e.f",
                      "--email-from", "me@x.y", "--email-subject", "s", "--smtp-server", "h",
                      "--smtp-port", "2525", "--smtp-user", "u", "--smtp-password", "pw",
                      "--zip-attachments", "--inline-preview", "--template-path", "t.html"])
    for fmt in ("console", "csv", "html", "json", "md", "pdf"):
        p.parse_args(["summary", *common, "--format", fmt, "--domain-summary",
                      "--summary-by-rank", "--region-categories", "HIP", "MARKERS"])
    assert p.parse_args(["-v"]).version




def test_examples_in_every_subcommands_help(capsys):
    from rocpd.cli import SUBCOMMANDS, main

    for sub in SUBCOMMANDS:
        with pytest.raises(SystemExit):
            main([sub, "--help"])
        out = capsys.readouterr().out
        assert "examples:" in out and f"rocpd {sub} " in out.split("examples:")[1], sub


def test_every_option_has_help_and_shows_its_default():
    import argparse

    from rocpd.cli import build_parser

    top = build_parser()
    subs = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, p in subs.items():
        fmt = p._get_formatter()
        for a in p._actions:
            if a.help == argparse.SUPPRESS or not a.option_strings or a.dest == "help":
                continue
            assert a.help, f"rocpd {name} {a.option_strings[0]} has no help"
            text = fmt._get_help_string(a)
            if a.default not in (None, False, [], argparse.SUPPRESS):
                assert "default" in text, f"rocpd {name} {a.option_strings[0]}: default not said"


def test_one_visible_spelling_per_concept(capsys):
    """The older spellings stay as hidden aliases: they parse, and help does not list them."""
    from rocpd.cli import build_parser, main

    with pytest.raises(SystemExit):
        main(["summary", "--help"])
    out = capsys.readouterr().out
    for hidden in ("--window", "--pct", "--csv"):
        assert hidden not in out, hidden
    # --by rank is not ROCm's --summary-by-rank (ROCm's "rank" is the process): both are shown
    for shown in ("--start", "--end", "--summary-by-rank", "--by", "--format", "--top", "--all"):
        assert shown in out, shown
    args = build_parser().parse_args(["summary", "x.db", "--by", "rank", "--csv", "p",
                                      "--window", "0", "10", "--pct", "0", "50"])
    assert (args.by, args.csv, args.window, args.pct) == ("rank", "p", [0, 10], [0.0, 50.0])
    assert build_parser().parse_args(["samples", "x.db", "--limit", "5"]).limit == 5


def test_samples_of_a_database_without_any_say_how_to_record_them(cli, edges):
    rc, out, err = cli("samples", edges)
    assert rc == 1 and out == ""
    assert err.strip() == ("rocpd: error: no call-stack samples in these databases (record them "
                           "with `rocprof run --sample ...`)")


def test_a_reader_that_leaves_early_is_no_error(edges):
    """`rocpd summary DB | head -1`: the reader has left before the tables are printed (here its
    end of the pipe is closed from the start); exit 0, nothing on stderr."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "rocpd", "summary", edges], stdout=w,
                           stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 0 and p.stderr == b"", p.stderr


@pytest.mark.parametrize("sub", ["summary", "analyze", "diff", "ranks", "report"])
def test_units_take_rocprofv3s_spellings_too(sub):
    """`rocprof run -u msec` and `rocpd summary -u msec` read alike; a bad unit says both sets."""
    from rocpd.cli import build_parser

    extra = ["y.db"] if sub == "diff" else (["-o", "r.html"] if sub == "report" else [])
    for given, unit in (("msec", "ms"), ("USEC", "us"), ("sec", "s"), ("ns", "ns")):
        assert build_parser().parse_args([sub, "x.db", *extra, "-u", given]).units == unit
    with pytest.raises(SystemExit):
        build_parser().parse_args([sub, "x.db", *extra, "--units", "minutes"])
