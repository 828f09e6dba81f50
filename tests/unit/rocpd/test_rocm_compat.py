"""ROCm's rocpd command lines and Python names, on databases made by the fixture helpers."""

from __future__ import annotations

import csv
import json
import os

import pytest

import rocpd
from rocpd.cli import main
from rocpd.errors import RocpdError


@pytest.fixture
def two(tmp_path, make_run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "a.db", seed=1, pid=1000)
    make_run(tmp_path / "b.db", seed=2, pid=2000)
    return "a.db", "b.db"


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_connect_takes_a_list_as_rocm_does(two):
    db = rocpd.connect(list(two))
    assert db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 400
    assert db.cursor().execute("SELECT COUNT(*) FROM top").fetchone()[0] > 0
    assert rocpd.RocpdImportData is rocpd.Connection
    assert len(rocpd.read_nodes(db)) == 2
    assert len(rocpd.read_processes(db, "pid = 2000")) == 1
    assert rocpd.version_info["version"]


def test_python_writers_name_files_as_rocm(two):
    db = rocpd.connect(list(two))
    assert rocpd.write_perfetto(db, output_path="o", output_file="x")
    assert rocpd.write_csv(db, output_path="o")
    from rocpd.output_config import output_config

    assert rocpd.write_otf2(db, output_config(output_path="o", output_file="y"))
    names = set(os.listdir("o"))
    assert {"x_results.pftrace", "out_kernel_trace.csv", "y_results.otf2"} <= names


def test_convert_several_formats_with_output_path_and_file(two):
    assert main(["convert", "-i", *two, "-f", "csv", "pftrace", "otf2", "-d", "outdir",
                 "-o", "six"]) == 0
    names = set(os.listdir("outdir"))
    assert {"six_kernel_trace.csv", "six_results.pftrace", "six_results.otf2"} <= names
    assert len(rows("outdir/six_kernel_trace.csv")) == 401


def test_convert_rocm_defaults_and_our_form_still_work(two):
    assert main(["convert", "-i", two[0], "--output-format", "pftrace"]) == 0
    assert os.path.isfile("rocpd-output-data/out_results.pftrace")
    assert main(["convert", two[0], "-f", "csv", "-o", "mine/run"]) == 0
    assert os.path.isfile("mine/run_kernel_trace.csv")


def test_time_window_percent_keeps_records_inside_as_rocms_code(two):
    whole = rocpd.connect(two[0]).kernels()
    half = rocpd.connect(two[0]).kernels(start="50%")
    t0, t1 = rocpd.connect(two[0]).run_bounds()
    mid = t0 + (t1 - t0) // 2
    assert len(half) == int((whole["start"] >= mid).sum())
    overlapping = rocpd.connect(two[0]).kernels(start="50%", inclusive=False)
    assert len(overlapping) == int((whole["end"] >= mid).sum())


def test_time_window_markers_and_errors(two, capsys):
    db = rocpd.connect(two[0])
    assert len(db.kernels(start_marker="train", end_marker="train")) == 200
    with pytest.raises(RocpdError, match="4 ROCTx markers are named 'step'"):
        db.kernels(start_marker="step")
    with pytest.raises(RocpdError, match="no ROCTx marker named 'nope'"):
        db.kernels(end_marker="nope")
    with pytest.raises(RocpdError, match="neither a percentage"):
        db.kernels(start="soon")
    assert main(["summary", two[0], "--start", "90%", "--end", "10%"]) == 1
    assert "ends" in capsys.readouterr().err


def test_query_rocm_form(two, capsys):
    assert main(["query", "-i", *two, "--query", "SELECT * FROM top_kernels LIMIT 10",
                 "--format", "csv"]) == 0
    table = rows("rocpd-output-data/out.csv")  # pandas' to_csv, as ROCm's query writes it
    assert table[0][:2] == ["name", "total_calls"] and len(table) == 5
    assert main(["query", "-i", two[0], "--query", "SELECT COUNT(*) AS n FROM kernels",
                 "--start", "50%", "-f", "json", "-o", "half"]) == 0
    n = json.load(open("rocpd-output-data/half.json"))[0]["n"]
    assert 0 < n < 200
    assert main(["query", two[0], "--sql", "SELECT 1 AS one"]) == 0  # ours: stdout
    assert "one" in capsys.readouterr().out


def test_query_script_defines_views(two, tmp_path):
    (tmp_path / "v.sql").write_text("CREATE TEMP VIEW k2 AS SELECT * FROM kernels WHERE pid = 2000;")
    assert main(["query", "-i", *two, "--script", "v.sql", "--query", "SELECT COUNT(*) FROM k2",
                 "-f", "csv", "-o", "k2"]) == 0
    assert rows("rocpd-output-data/k2.csv")[1] == ["200"]


def test_summary_rocm_tables_and_columns(two, capsys):
    assert main(["summary", "-i", *two, "--summary-by-rank", "--domain-summary",
                 "-f", "csv", "console"]) == 0
    out = capsys.readouterr().out
    assert "KERNELS_SUMMARY:" in out and "DURATION (nsec)" in out and "Dropped records" in out
    k = rows("rocpd-output-data/kernels_summary.csv")  # no -o: ROCm's names
    assert k[0] == ["Name", "Calls", "DURATION (nsec)", "AVERAGE (nsec)", "PERCENT (INC)",
                    "MIN (nsec)", "MAX (nsec)", "STD_DEV"]
    assert sum(int(r[1]) for r in k[1:]) == 400
    by_rank = rows("rocpd-output-data/kernels_summary_by_rank.csv")
    assert by_rank[0][:2] == ["ProcessID", "Hostname"] and {r[0] for r in by_rank[1:]} == {"1000", "2000"}
    dom = {r[0]: r for r in rows("rocpd-output-data/domain_summary.csv")[1:]}
    assert {"KERNELS", "MARKERS", "CUDA", "MEMORY_COPIES"} <= set(dom)
    assert os.path.isfile("rocpd-output-data/domain_summary_by_rank.csv")
    assert main(["summary", "-i", two[0], "-f", "csv", "-o", "run"]) == 0
    assert os.path.isfile("rocpd-output-data/run_kernels_summary.csv")


def test_summary_region_categories(two, capsys):
    assert main(["summary", "-i", two[0], "--region-categories", "NONE"]) == 0
    out = capsys.readouterr().out
    assert "KERNELS_SUMMARY:" in out and "CUDA_SUMMARY" not in out and "MARKERS_SUMMARY" not in out
    assert main(["summary", "-i", two[0], "--region-categories", "CUDA", "MARKERS",
                 "--domain-summary", "--format", "html"]) == 0
    names = set(os.listdir("rocpd-output-data"))
    assert {"cuda_summary.html", "markers_summary.html", "domain_summary.html"} <= names
    assert "kernels_summary.html" not in names


def test_merge_rocm_naming(two):
    assert main(["merge", "-i", *two, "-d", "merged3DBs"]) == 0
    assert rocpd.connect("merged3DBs/merged.db").execute(
        "SELECT COUNT(*) FROM kernels").fetchone()[0] == 400


def test_package_index_and_connect(two, tmp_path):
    assert main(["package", "-i", *two]) == 0  # index.yaml here, naming the files in place
    assert rocpd.connect("index.yaml").execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 400
    assert main(["package", "-i", *two, "-d", "run1", "--consolidate", "--copy"]) == 0
    assert sorted(os.listdir("run1.rpdb")) == ["a.db", "b.db", "index.yaml"]
    assert os.path.isfile("a.db"), "--copy leaves the originals"
    text = open("run1.rpdb/index.yaml").read()
    assert "rocprofiler-sdk:" in text and "rocpd_package_version: '1.0'" in text
    assert len(rocpd.connect("run1.rpdb").paths) == 2
    assert main(["summary", "-i", "run1.rpdb", "-f", "csv", "-d", "s"]) == 0
    os.makedirs("pkg.rpdb")
    (tmp_path / "pkg.rpdb" / "index.yaml").write_text(
        "rocprofiler-sdk:\n  rocpd:\n    files: ../*.db\n    path: .\n"
        "    rocpd_package_version: '1.0'\n")
    assert len(rocpd.connect(["pkg.rpdb"]).paths) == 2


def test_package_index_reader_without_pyyaml(tmp_path, monkeypatch):
    from rocpd.io import package

    text = package._dump({"rocprofiler-sdk": {"rocpd": {
        "rocpd_package_version": "1.0", "path": ".", "files": ["a.db", "sub dir/b.db"]}}})
    assert package._mini_load(text) == {"rocprofiler-sdk": {"rocpd": {
        "files": ["a.db", "sub dir/b.db"], "path": ".", "rocpd_package_version": "1.0"}}}


def test_bad_index_is_one_line(tmp_path):
    bad = tmp_path / "index.yaml"
    bad.write_text("something: else\n")
    with pytest.raises(RocpdError, match="not a rocpd package index") as e:
        rocpd.connect(str(bad))
    assert "\n" not in str(e.value)


def test_importer_module_name(two):
    from rocpd.importer import RocpdImportData

    assert RocpdImportData(["a.db"]).execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 200
