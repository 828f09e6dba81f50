"""`rocpd package` refuses a file that is not a readable rocpd database as every reader does: one
line naming it and what is wrong, exit 1, and no index (nor folder, nor moved file) left behind."""

from __future__ import annotations

import os
import sqlite3

import pytest


def _random(path, make_run):
    path.write_bytes(bytes(range(256)) * 16)


def _empty(path, make_run):
    path.write_bytes(b"")


def _truncated(path, make_run):
    make_run(path.with_name("whole.db"), n_kernels=2000)
    data = path.with_name("whole.db").read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _foreign(path, make_run):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()


JUNK = {
    "random bytes": (_random, "not a readable SQLite database"),
    "an empty file": (_empty, "not a rocpd database"),
    "a truncated database": (_truncated, "not a readable SQLite database"),
    "another schema": (_foreign, "not a rocpd database"),
}


@pytest.mark.parametrize("kind", list(JUNK))
@pytest.mark.parametrize("consolidate", [False, True])
def test_junk_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, cli, make_run, kind,
                                                   consolidate):
    make, why = JUNK[kind]
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "good.db")
    junk = tmp_path / "junk.db"
    make(junk, make_run)
    before = sorted(os.listdir(tmp_path))
    rc, out, err = cli("package", "good.db", "junk.db", "-d", "job", *(["-c"] if consolidate else []))
    assert rc == 1, out
    assert err.startswith("rocpd: error: junk.db: ") and why in err and err.count("\n") == 1, err
    assert sorted(os.listdir(tmp_path)) == before  # no job.rpdb, no index, nothing moved


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_unreadable_input_is_refused(tmp_path, monkeypatch, cli, make_run):
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "locked.db")
    os.chmod(tmp_path / "locked.db", 0)
    rc, _, err = cli("package", "locked.db", "-d", "job")
    assert rc == 1 and err.startswith("rocpd: error: locked.db: ") and err.count("\n") == 1, err
    assert not (tmp_path / "job.rpdb").exists()


def test_good_inputs_are_still_packaged(tmp_path, monkeypatch, cli, make_run):
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "a.db")
    make_run(tmp_path / "b.db", pid=2000)
    rc, out, err = cli("package", "a.db", "b.db", "-d", "job")
    assert rc == 0, err
    assert (tmp_path / "job.rpdb" / "index.yaml").is_file()
    rc, out, err = cli("summary", "job.rpdb")
    assert rc == 0, err
