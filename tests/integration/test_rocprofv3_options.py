"""rocprofv3's option forms on `rocprof run`: short forms, [BOOL] values, -f formats written at
exit, -u/--summary-output-file, --selected-regions and -i input files (YAML, JSON, jobs)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from rocprof.cli import build_parser
from rocprof.cli.run import options_from, split_argv
from support import MESSAGE, WORKLOADS, open_db, run_rocprof


def options(*argv):
    own, target = split_argv(list(argv))
    args = build_parser().parse_args(["run", *own])
    return options_from(args), target


def test_short_forms_and_bool_values():
    o, target = options("-s", "script.py")
    assert o.runtime_trace and o.kernel_trace and target == ["script.py"]
    o, _ = options("-r", "script.py")
    assert o.runtime_trace and not o.memory_allocation_trace
    o, target = options("--sys-trace", "false", "--kernel-trace=true", "script.py", "x")
    assert o.kernel_trace and not o.runtime_trace and target == ["script.py", "x"]
    o, target = options("--kernel-trace", "no", "-f", "csv", "json", "--", "app")
    assert not o.runtime_trace and o.output_formats == ["csv", "json"] and target == ["--", "app"]


def test_bad_bool_is_one_line(tmp_path):
    r = run_rocprof("run", "--kernel-trace=maybe", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "BOOL" in r.stderr


def test_output_formats_written_at_exit(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "f", "-f", "csv", "json", "--",
                    WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f_marker_api_trace.csv").exists()
    trace = json.loads((tmp_path / "f_results.json").read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert {"outer", "inner", "leaf"} <= names


def test_summary_units_and_output_file(tmp_path):
    out = tmp_path / "summary.txt"
    r = run_rocprof("run", "-d", tmp_path, "-o", "u", "-S", "-u", "msec", "--summary-output-file",
                    out, WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "TotalDurationMs" in text and "TotalDurationNs" not in text
    assert "MARKER" in text and "TotalDuration" not in r.stdout
    # rocprofv3's stream names: the tables go to that stream, no file of that name is made.
    for stream in ("stderr", "STDOUT"):
        r = run_rocprof("run", "-d", tmp_path, "-o", "s", "-S", "--summary-output-file", stream,
                        WORKLOADS / "nested_ranges.py", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        shown, other = (r.stderr, r.stdout) if stream == "stderr" else (r.stdout, r.stderr)
        assert "TotalDurationNs" in shown and "TotalDuration" not in other
        assert not (tmp_path / stream).exists()


def test_selected_regions_records_only_between_resume_and_pause(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "sel", "--selected-regions",
                    WORKLOADS / "selected_regions.py")
    assert r.returncode == 0, r.stderr
    with open_db(tmp_path / "sel_results.db") as db:
        names = [n for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions")]
    assert names == ["inside"]


@pytest.mark.parametrize("kind", ["yaml", "json"])
def test_input_file_jobs_each_run_the_target(kind, tmp_path):
    if kind == "yaml":
        pytest.importorskip("yaml")
    jobs = {"jobs": [{"output_directory": str(tmp_path), "output_file": "job1",
                      "kernel_trace": True},
                     {"output_directory": str(tmp_path), "output_file": "job2",
                      "output_format": ["csv"], "selected_regions": True}]}
    path = tmp_path / f"input.{kind}"
    if kind == "yaml":
        import yaml

        path.write_text(yaml.safe_dump(jobs))
    else:
        path.write_text(json.dumps(jobs))
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    r = run_rocprof("run", "-i", path, "--", "python3", WORKLOADS / "selected_regions.py", env=env)
    assert r.returncode == 0, r.stderr
    with open_db(tmp_path / "job1_results.db") as db:
        assert sorted(n for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions")) == ["before", "inside"]
    with open_db(tmp_path / "job2_results.db") as db:
        assert [n for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions")] == ["inside"]
    assert (tmp_path / "job2_marker_api_trace.csv").exists()


def test_input_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("pmc: SQ_WAVES\npmc SQ_BUSY_CYCLES\n")  # the second line lacks its colon
    r = run_rocprof("run", "-i", bad, "--", "true")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "line 2" in r.stderr


def test_text_input_runs_one_job_per_pmc_line(tmp_path):
    """rocprofv3's text input: each `pmc:` line is a job with those counters (stored in the run's
    options; collected where a GPU is, and said so where none is)."""
    jobs = tmp_path / "input.txt"
    jobs.write_text("# counters\npmc: SQ_WAVES FETCH_SIZE\n\npmc: dram__bytes_write.sum\n")
    r = run_rocprof("run", "-i", jobs, "-d", tmp_path, "--",
                    sys.executable, WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    pmcs = []
    for db_path in sorted(tmp_path.glob("*_results.db")):
        with open_db(db_path) as db:
            (opts,) = db.execute("SELECT value FROM rocpd_metadata WHERE tag='rocprof.options'").fetchone()
        pmcs.append(json.loads(opts)["pmc"])
    assert sorted(pmcs) == [["dram__bytes_write.sum"], ["sm__warps_launched.sum", "dram__bytes_read.sum"]]


def test_marker_records_carry_their_own_correlation_ids(tmp_path):
    # rocprofv3 gives every ROCTx record a correlation id of its own (never 0).
    r = run_rocprof("run", "-d", tmp_path, "-o", "c", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    with open_db(tmp_path / "c_results.db") as db:
        ids = [i for (i,) in db.execute("SELECT corr_id FROM regions_and_samples")]
    assert len(ids) == 8 and 0 not in ids and len(set(ids)) == len(ids)


def test_rocprofv3_placeholders(tmp_path):
    env = {"SLURM_JOB_ID": "77", "ROCPROF_TEST_TAG": "exp"}
    r = run_rocprof("run", "-d", tmp_path / "%job%", "-o", "%tag%_$env{ROCPROF_TEST_TAG}_%p",
                    WORKLOADS / "nested_ranges.py", env=env)
    assert r.returncode == 0, r.stderr
    (db,) = (tmp_path / "77").glob("*_results.db")
    tag, label, pid = db.name[: -len("_results.db")].rsplit("_", 2)
    assert (tag, label) == ("nested_ranges.py", "exp") and pid.isdigit()


def test_collection_period_keeps_one_window(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "-P", "250:250:1",
                    "--collection-period-unit", "msec", WORKLOADS / "periodic_ranges.py")
    assert r.returncode == 0, r.stderr
    ticks = int(r.stdout.split("ticks")[1])
    with open_db(tmp_path / "p_results.db") as db:
        kept = sorted(int(n.split("-")[1]) for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions"))
    # Nothing from the first ticks (the delay), nothing from the last ones, one run of ticks.
    assert kept and 0 not in kept and ticks - 1 not in kept, (kept, ticks)
    assert kept == list(range(kept[0], kept[-1] + 1))


def test_log_level_error_hides_notes_and_preload_reaches_the_command(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "--kernel-trace", WORKLOADS / "nested_ranges.py")
    assert "GPU tracing requested" in r.stderr or "rocprof:" in r.stderr
    r = run_rocprof("run", "-d", tmp_path, "--log-level", "error", "--kernel-trace",
                    WORKLOADS / "nested_ranges.py")
    assert "GPU tracing requested" not in r.stderr
    lib = tmp_path / "libnothing.so"
    import shutil
    import subprocess

    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    subprocess.run([cc, "-shared", "-fPIC", "-x", "c", "-", "-o", lib], input=b"int x;",
                   check=True)
    r = run_rocprof("run", "-d", tmp_path, "--preload", lib, "--", "sh", "-c",
                    'echo "preload=$LD_PRELOAD"')
    assert r.returncode == 0, r.stderr
    assert f"preload={lib}" in r.stdout


def test_minimum_output_data_skips_outputs_of_small_databases_but_keeps_them(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "m", "--stats", "-f", "csv",
                    "--minimum-output-data", "100000", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    assert "not more than --minimum-output-data 100000 KB" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m_results.db"]
    r = run_rocprof("run", "-d", tmp_path / "big", "-o", "m", "--stats",
                    "--minimum-output-data", "1", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    assert any(p.name.endswith("_stats.csv") for p in (tmp_path / "big").iterdir())
    bad = run_rocprof("run", "--minimum-output-data", "-1", WORKLOADS / "nested_ranges.py")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_kernel_rename_and_the_two_kinds_of_kernel_regex():
    """--kernel-rename reaches the writer's settings; rocprofv3's --kernel-include-regex selects
    counter kernels only (the trace keeps every kernel), ours --trace-kernel-*-regex filter the
    trace."""
    import argparse

    from rocprof import backends
    from rocprof.cli import run as run_cli

    p = argparse.ArgumentParser()
    run_cli.add_parser(p)
    args = p.parse_args(["--kernel-rename", "--kernel-include-regex", "gemm",
                         "--trace-kernel-exclude-regex", "elementwise", "x.py"])
    o = run_cli.options_from(args)
    assert o.kernel_rename and o.kernel_include_regex == "gemm"
    settings, _ = backends.configure(o)
    assert settings.markers.kernel_rename is True
    # What every GPU backend traces, live GPU or not.
    names = settings.kernel_names
    assert names.include == "" and names.exclude == "elementwise"


def test_guid_per_row_reaches_the_writer(tmp_path):
    """By default the guid column is generated; --guid-per-row stores it in every row (for
    readers with an SQLite older than 3.31). Either way every row reads the database's guid."""
    for flag, kind in (([], "generated"), (["--guid-per-row"], "stored")):
        out = tmp_path / kind
        r = run_rocprof("run", "-d", out, "-o", "g", *flag, WORKLOADS / "nested_ranges.py")
        assert r.returncode == 0, r.stderr
        con = open_db(out / "g_results.db")
        meta = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))
        assert meta["rocprof.guid_column"] == kind
        guids = {g for (g,) in con.execute("SELECT DISTINCT guid FROM rocpd_region")}
        assert guids == {meta["guid"]}
