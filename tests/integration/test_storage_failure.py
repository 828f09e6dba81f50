"""Issue 12 (2): a full disk is loud and bounded. On a real 2 MiB tmpfs the sink stops at the
first write error, keeps what it committed valid, counts every record it could not store,
says so once at once and once at exit, and the launcher keeps the script's exit code."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from support import WORKLOADS, open_db, run_rocprof

N = 200_000


@pytest.fixture
def tiny_fs(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: the disk-full test needs a real small filesystem")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a 2 MiB tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_is_reported_counted_and_bounded(tiny_fs):
    r = run_rocprof("run", "-d", tiny_fs, "-o", "full", WORKLOADS / "many_ranges.py", str(N), "5",
                    timeout=300)
    assert r.returncode == 5, r.stderr  # the script's code, not hidden, not replaced
    assert "SQLite insert failed" not in r.stderr
    at_once = [ln for ln in r.stderr.splitlines() if "cannot write" in ln]
    assert len(at_once) == 1 and "disk full" in at_once[0], r.stderr
    at_exit = [ln for ln in r.stderr.splitlines() if "records dropped" in ln]
    assert len(at_exit) == 1 and "storage" in at_exit[0], r.stderr
    db = tiny_fs / "full_results.db"
    con = open_db(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = con.execute("SELECT count(*) FROM regions").fetchone()[0]
    assert 0 < stored < N
    unknown = con.execute("SELECT count(*) FROM regions WHERE name IS NULL OR name = '' "
                          "OR name = '(unknown)'").fetchone()[0]
    assert unknown == 0, "rows whose names were lost"
    meta = dict(con.execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta.get("rocprof.storage_error", "").startswith("disk full"), meta
    assert meta["rocprof.status"] == "disk-full"  # what every reader says in one line
    assert f"{db} is incomplete (disk-full)" in r.stderr, r.stderr
    unstored = int(meta["rocprof.dropped_records.storage"])
    dropped = int(meta["rocprof.dropped_records"])
    assert unstored > 0
    assert stored + dropped == N, f"{stored} stored + {dropped} counted as dropped != {N} recorded"
    assert int(re.search(r"(\d+) records dropped", at_exit[0]).group(1)) == dropped
    # The summary of that database says so (it said "Dropped records: none").
    from rocpd.summary import stats

    assert f"Dropped records: {dropped} LOST" in stats.format_summary(str(db))
