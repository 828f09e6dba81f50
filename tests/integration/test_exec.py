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


def test_native_exec_keeps_every_record_and_the_new_image_records_its_own(exec_native, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", "--", exec_native, N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)


def test_python_exec_in_process_keeps_every_record_and_says_where(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "ex", WORKLOADS / "exec_python.py", N)
    assert r.returncode == 0, r.stderr
    _check(tmp_path, r.stderr)
    # The launcher's own image ends at the exec: it names its database then, and the image
    # that replaced it names every database of the run at its end.
    assert r.stderr.count(f"results written to {tmp_path / 'ex_results.db'}") == 2, r.stderr
