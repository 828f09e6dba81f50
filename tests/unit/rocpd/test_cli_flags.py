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
