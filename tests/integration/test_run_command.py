"""`rocprof run -- CMD`: any program runs as a child and every process it starts records
into its own database (native programs through libroctx64 by bare name, Python processes
through the child-following sitecustomize); exit codes and signals pass through."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import MESSAGE, WORKLOADS, open_db, popen_rocprof, run_rocprof


@pytest.fixture(scope="module")
def dlopen_prog(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("c") / "prog"
    subprocess.run([cc, "-O1", "-o", out, WORKLOADS / "roctx_dlopen.c", "-ldl"], check=True)
    return out


def regions(db: Path) -> list[str]:
    with open_db(db) as c:
        return [n for (n,) in c.execute(f"SELECT {MESSAGE} FROM regions_and_samples ORDER BY start")]


def python_path_env() -> dict:
    # `python3` on PATH is this interpreter (the venv's), as in an activated environment.
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_native_program_dlopens_libroctx64_by_name_and_exit_code_passes(dlopen_prog, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "n", "--", dlopen_prog, "7")
    assert r.returncode == 7, r.stderr
    assert "native ranges recorded" in r.stdout
    db = tmp_path / "n_results.db"
    assert f"results written to {db}" in r.stderr
    names = regions(db)
    assert names.count("outer") == names.count("middle") == names.count("inner") == 5
    assert names.count("done") == 1 and len(names) == 16
    with open_db(db) as c:
        depth = dict(c.execute(
            "SELECT json_extract(r.extdata, '$.message'), count(p.id) FROM regions r"
            " LEFT JOIN regions p ON p.start <= r.start "
            "AND p.end >= r.end AND p.id != r.id AND p.tid = r.tid GROUP BY r.id").fetchall())
    assert depth["inner"] == 2 and depth["outer"] == 0


def test_bare_command_is_found_on_path(dlopen_prog, tmp_path):
    env = {"PATH": f"{dlopen_prog.parent}{os.pathsep}{os.environ['PATH']}"}
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "--", "prog", env=env)
    assert r.returncode == 0, r.stderr
    assert regions(tmp_path / "p_results.db").count("outer") == 5


@pytest.mark.parametrize("shape", ["python3", "sh -c"])
def test_python_command_records_the_scripts_ranges(shape, tmp_path):
    script = WORKLOADS / "nested_ranges.py"
    cmd = ["python3", script] if shape == "python3" else ["sh", "-c", f"python3 {shlex.quote(str(script))}"]
    r = run_rocprof("run", "-d", tmp_path, "-o", "py", "--", *cmd, env=python_path_env())
    assert r.returncode == 0, r.stderr
    dbs = sorted(tmp_path.glob("*.db"))
    assert [d.name for d in dbs] == ["py_results.db"], (dbs, r.stderr)
    assert regions(dbs[0]), "the script's ROCTx ranges are missing"
    assert f"results written to {dbs[0]}" in r.stderr


def test_every_database_of_the_run_is_printed(tmp_path):
    # A Python script that starts a Python child: two processes, two databases, both printed.
    code = ("import subprocess, sys, roctx\n"
            "with roctx.range('parent'):\n"
            "    subprocess.run([sys.executable, '-c', 'import roctx; roctx.mark(\"child\")'], check=True)\n")
    r = run_rocprof("run", "-d", tmp_path, "-o", "two", "--", "python3", "-c", code,
                    env=python_path_env())
    assert r.returncode == 0, r.stderr
    dbs = sorted(tmp_path.glob("*.db"))
    assert len(dbs) == 2 and (tmp_path / "two_results.db") in dbs, dbs
    for db in dbs:
        assert f"results written to {db}" in r.stderr


def test_ranks_started_like_srun_write_one_database_each(tmp_path):
    procs = [popen_rocprof("run", "-d", tmp_path, "-o", "rank%rank%", "--", "python3",
                           WORKLOADS / "nested_ranges.py",
                           env={**python_path_env(), "SLURM_PROCID": str(rank)}) for rank in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert sorted(d.name for d in tmp_path.glob("*.db")) == [f"rank{i}_results.db" for i in range(4)]


def test_rank_resolved_in_each_process_when_the_launcher_is_outside(dlopen_prog, tmp_path):
    # `rocprof run -- mpirun -n 2 ./app` shape: the ranks' own variables name the files.
    script = f"OMPI_COMM_WORLD_RANK=0 {dlopen_prog} & OMPI_COMM_WORLD_RANK=1 {dlopen_prog}; wait"
    r = run_rocprof("run", "-d", tmp_path, "-o", "r%rank%", "--", "sh", "-c", script)
    assert r.returncode == 0, r.stderr
    assert sorted(d.name for d in tmp_path.glob("*.db")) == ["r0_results.db", "r1_results.db"]


def test_death_by_signal_passes_through(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "k", "--", "sh", "-c", "kill -KILL $$")
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr)


def test_sigterm_to_the_launcher_reaches_the_command(tmp_path):
    marker = tmp_path / "got-term"
    script = (f"import signal, sys, time\n"
              f"def h(*a):\n    open({str(marker)!r}, 'w').close(); sys.exit(3)\n"
              f"signal.signal(signal.SIGTERM, h)\nprint('ready', flush=True)\n"
              # short sleeps: the handler runs between them (tests/workloads/exit_with.py)
              f"for _ in range(600): time.sleep(0.1)\n")
    p = popen_rocprof("run", "-d", tmp_path, "-o", "t", "--", "python3", "-c", script,
                      env=python_path_env())
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    assert marker.exists()


def test_missing_command_is_one_line(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "--", "no-such-command-xyz")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "neither a file nor a command on PATH" in r.stderr


def test_a_folder_runs_its_main_as_python_does_and_one_without_is_one_line(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text("import sys\nprint(sys.argv)\nraise SystemExit(7)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", "-o", "a", app, "x", cwd=tmp_path)
    assert r.returncode == 7, r.stderr
    assert r.stdout.strip() == repr([str(app), "x"])
    assert (tmp_path / "out" / "a_results.db").exists()
    (tmp_path / "empty").mkdir()
    r = run_rocprof("run", "-d", tmp_path / "out", "empty", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == ("rocprof run: 'empty' is a folder without a __main__.py (give a "
                                "script in it, or -m for a package)"), r.stderr


def test_in_process_script_path_unchanged(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "s", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    assert [d.name for d in tmp_path.glob("*.db")] == ["s_results.db"]


def test_launcher_itself_writes_nothing_for_a_command_that_records_nothing(tmp_path):
    start = time.time()
    r = run_rocprof("run", "-d", tmp_path, "-o", "e", "--", "true")
    assert r.returncode == 0, r.stderr
    assert not list(tmp_path.glob("*.db")), "a database for a process that recorded nothing"
    assert time.time() - start < 120
