"""Output paths have one owner, the core (session/output_path.hpp): the launcher, Python children
and native programs that autostart name their files with the same code, and rocpd reads ranks
back from the variables the core names them by."""

from __future__ import annotations

import os
import subprocess

import pytest
from rocprof import _core, paths
from support import WORKLOADS, build_roctx_program


def test_the_reader_reads_ranks_from_the_writers_variables():
    from rocpd.io import filters

    assert tuple(filters._RANK_VARS) == tuple(_core.RANK_VARIABLES)


def test_python_helpers_are_the_cores():
    assert paths.database_template(None, None) == \
        f"{_core.DEFAULT_OUTPUT_DIR}/{_core.DEFAULT_OUTPUT_NAME}{_core.DATABASE_SUFFIX}"
    assert paths.per_process_name("run") == "run_%pid%"
    assert paths.prefix_of("/a/b/x_results.db") == "/a/b/x"
    with pytest.raises(ValueError, match="unknown placeholder %nope%"):
        paths.expand("x/%nope%")
    # The launch time the launcher exports is the variable both expansions read.
    from rocshared import placeholders

    assert _core.LAUNCH_TIME_VAR == placeholders.LAUNCH_TIME_VAR == "ROCPROF_LAUNCH_TIME"


def test_a_native_program_names_its_file_as_python_does(tmp_path, monkeypatch):
    """The same template, expanded by a C program's autostart (no Python in it) and by the
    Python API, gives the same name for the same argv and environment."""
    prog = build_roctx_program(WORKLOADS / "roctx_c.c", tmp_path / "roctx_c")
    env = {"PATH": "/usr/bin:/bin", "SLURM_PROCID": "3", "SLURM_JOB_ID": "41", "RUN_LABEL": "nightly"}
    template = str(tmp_path / "out" / "%tag%_r%rank%_j%j-%env{RUN_LABEL}%_%args%_results.db")
    r = subprocess.run([prog, "a b", "c"], capture_output=True, text=True,
                       env={**env, "ROCPROF_AUTOSTART_OUTPUT": template})
    assert r.returncode == 0 and "rocprof" not in r.stderr, r.stderr
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert [p.name for p in (tmp_path / "out").iterdir()] == \
        [os.path.basename(_core.expand_path(template, [str(prog), "a b", "c"]))]
    assert (tmp_path / "out" / "roctx_c_r3_j41-nightly_a_b_c_results.db").exists()
