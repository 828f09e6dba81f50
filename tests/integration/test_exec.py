"""exec*() closes the database first (drained, committed, the WAL folded in: nothing recorded
before the exec is lost, the file says "complete"); the new image records into its own, and
the run names both."""

from __future__ import annotations

import os
import re

import pytest
from support import MESSAGE, WORKLOADS, build_roctx_program, open_db, run_rocprof

N = 2000


def _by_name(db) -> dict[str, int]:
    return dict(open_db(db).execute(f"SELECT {MESSAGE}, count(*) FROM regions GROUP BY 1"))


def _status(db) -> str:
    return dict(open_db(db).execute("SELECT tag, value FROM rocpd_metadata"))["rocprof.status"]


def _check(folder, stderr: str) -> None:
    first = folder / "ex_results.db"
    assert _by_name(first) == {"before-exec": N}, stderr
    assert _status(first) == "complete"
    assert not os.path.exists(f"{first}-wal"), "the WAL was not folded into the .db before exec"
    (second,) = [db for db in folder.glob("ex_*_results.db")]
    assert _by_name(second) == {"after-exec": 1}, stderr
    written = re.findall(r"results written to (\S+)", stderr)
    assert str(first) in written and str(second) in written, stderr


@pytest.fixture(scope="module")
def exec_native(tmp_path_factory):
    return build_roctx_program(WORKLOADS / "exec_native.c",
                               tmp_path_factory.mktemp("c") / "exec_native")


@pytest.fixture(scope="module")
def exec_dlopen(tmp_path_factory):
    """Its session is started by a library outside the program's own symbol lookup, as in a
    CUDA or HIP program that the driver's injected tool library records: libc's exec*() is
    what the program calls (librocprof_exec, preloaded, is what closes the database)."""
    return build_roctx_program(WORKLOADS / "exec_dlopen.c",
                               tmp_path_factory.mktemp("c") / "exec_dlopen", linked=False)


def test_native_exec_keeps_every_record_and_the_new_image_records_its_own(exec_native, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", exec_native, N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)


def test_exec_in_a_program_without_libroctx64_linked_keeps_every_record(exec_dlopen, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", exec_dlopen, N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)
    assert "incomplete" not in r.stderr, r.stderr


def test_exec_of_a_program_that_records_nothing_leaves_a_complete_database(exec_dlopen, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", exec_dlopen, N, "/bin/true")
    assert r.returncode == 0, r.stderr
    first = tmp_path / "ex_results.db"
    assert _by_name(first) == {"before-exec": N}, r.stderr
    assert _status(first) == "complete" and not os.path.exists(f"{first}-wal")
    assert [p.name for p in tmp_path.glob("*.db")] == ["ex_results.db"]
    assert "incomplete" not in r.stderr, r.stderr


@pytest.mark.parametrize("program", ["exec_native", "exec_dlopen"])
def test_failed_exec_closes_the_database_and_recording_resumes(program, request, tmp_path):
    """A failed exec: the database closed before it is complete, and the program, still
    itself, records on into another; its exit status passes through. With libroctx64 linked,
    its exec family and the preloaded one both wrap the call: the outer one resumes."""
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", request.getfixturevalue(program), N,
                    tmp_path / "no-such-program")
    assert r.returncode == 9, r.stderr
    first = tmp_path / "ex_results.db"
    assert _by_name(first) == {"before-exec": N}, r.stderr
    assert _status(first) == "complete" and not os.path.exists(f"{first}-wal")
    (second,) = [db for db in tmp_path.glob("ex_*results.db") if db != first]
    assert _by_name(second) == {"after-failed-exec": 1}, r.stderr
    assert _status(second) == "complete", r.stderr


def test_python_exec_under_a_command_keeps_every_record(tmp_path):
    """A Python process of `rocprof run -- CMD`: rocprof.session's os.exec* wrapper and the
    preloaded exec family both close the session; the database is closed once."""
    import sys

    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", sys.executable,
                    WORKLOADS / "exec_python.py", N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)


def test_python_exec_in_process_keeps_every_record_and_says_where(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", WORKLOADS / "exec_python.py", N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)
    # The launcher's own image ends at the exec: it names its database then, and the image
    # that replaced it names every database of the run at its end.
    assert r.stderr.count(f"results written to {tmp_path / 'ex_results.db'}") == 2, r.stderr
