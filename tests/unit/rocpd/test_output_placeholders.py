"""rocpd expands the placeholders of its output paths as rocprofv3 and `rocprof run` do (one
implementation, rocshared.placeholders): -d/-o of every subcommand in ROCm's form, format_path and
output_config; a bad one is a one-line error."""

from __future__ import annotations

import os

import rocpd
from rocpd.output_config import output_config


def test_rocm_form_outputs_expand_rank_env_and_host(tmp_path, monkeypatch, cli, make_run):
    make_run(tmp_path / "run.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("LABEL", "nightly")
    rc, out, err = cli("convert", "-i", "run.db", "-f", "pftrace", "-d", "out_%rank%/%hostname%",
                       "-o", "r%r-%env{LABEL}%")
    assert rc == 0, err
    assert (tmp_path / "out_2" / os.uname().nodename / "r2-nightly_results.pftrace").is_file(), out
    rc, out, err = cli("summary", "-i", "run.db", "--format", "csv", "-d", "sum_%rank%", "-o",
                       "s%nid%")
    assert rc == 0, err
    assert (tmp_path / "sum_2" / "s2_kernels_summary.csv").is_file(), sorted(os.listdir(tmp_path))
    rc, out, err = cli("merge", "-i", "run.db", "-d", "m_%rank%", "-o", "all_%size%")
    assert rc == 0, err
    assert (tmp_path / "m_2" / "all_1.db").is_file()


def test_a_bad_placeholder_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, cli, make_run):
    make_run(tmp_path / "run.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_SUCH_VAR", raising=False)
    for bad in ("out_%nope%", "out_%env{NO_SUCH_VAR}%"):
        rc, out, err = cli("convert", "-i", "run.db", "-f", "csv", "-d", bad)
        assert rc == 1 and err.startswith("rocpd: error: ") and err.count("\n") == 1, err
        assert bad.split("%")[1].split("{")[-1].rstrip("}") in err, err
    assert sorted(os.listdir(tmp_path)) == ["run.db"]


def test_format_path_and_output_config_know_the_whole_set(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_PROCID", "5")
    for var in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    assert rocpd.format_path("a_%rank%_%job%_%p", tag="t") == f"a_5_77_{os.getpid()}"
    assert rocpd.format_path("%tag%/x", tag="mytool") == "mytool/x"
    cfg = output_config(output_path=str(tmp_path / "o_%rank%"), output_file="f_%nid%")
    assert cfg.filename("results", ".pftrace") == str(tmp_path / "o_5" / "f_5_results.pftrace")
