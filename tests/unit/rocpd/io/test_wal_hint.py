"""A run killed before its checkpoint keeps its tables in NAME.db-wal: a copy of the .db alone must
say so, not only "not a rocpd database"."""

import shutil
import sqlite3

import pytest

import rocpd
from rocpd import _schema, progress
from rocpd.cli import main
from rocpd.errors import RocpdError
from rocpd.testing import new_guid


@pytest.fixture
def live_run(tmp_path):
    """run.db in WAL mode whose rocpd tables are committed only to run.db-wal: the writer stays
    open with automatic checkpoints off, as a killed process would leave it."""
    path = tmp_path / "live" / "run.db"
    path.parent.mkdir()
    guid = new_guid()
    w = sqlite3.connect(path)
    assert w.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    w.execute("PRAGMA wal_autocheckpoint = 0")
    w.executescript(_schema.render("tables.sql", guid))
    w.execute(f'INSERT INTO "rocpd_metadata{_schema.suffix_of(guid)}" (tag, value) VALUES'
              " ('schema_version', '3'), ('guid', ?)", (guid,))
    w.commit()
    assert (tmp_path / "live" / "run.db-wal").stat().st_size > 0
    header = path.read_bytes()[:100]
    assert header[18] == header[19] == 2  # WAL mode, recorded in the .db itself
    yield path
    w.close()


def test_copy_without_wal_says_the_wal_is_missing(live_run, tmp_path, monkeypatch, capsys):
    copy = tmp_path / "copy" / "run.db"
    copy.parent.mkdir()
    shutil.copyfile(live_run, copy)
    with pytest.raises(RocpdError) as e:
        rocpd.connect(copy)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{copy}: not a rocpd database")
    assert "run.db-wal is missing" in msg and "unfinished run" in msg, msg
    monkeypatch.setattr(progress, "_enabled", False)
    assert main(["summary", str(copy)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.db-wal is missing" in err
    # Following the advice works, even after the failed opens left an empty -wal and a -shm there.
    shutil.copyfile(f"{live_run}-wal", f"{copy}-wal")
    with rocpd.connect(copy) as db:
        assert len(db.parts) == 1


def test_copy_with_wal_reads(live_run, tmp_path):
    copy = tmp_path / "copy" / "run.db"
    copy.parent.mkdir()
    shutil.copyfile(live_run, copy)
    shutil.copyfile(f"{live_run}-wal", f"{copy}-wal")
    with rocpd.connect(copy) as db:
        assert len(db.parts) == 1


def test_no_hint_for_a_plain_foreign_database(tmp_path):
    path = tmp_path / "other.db"
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE t (x)")
    c.commit()
    c.close()
    with pytest.raises(RocpdError) as e:
        rocpd.connect(path)
    assert "not a rocpd database" in str(e.value) and "-wal" not in str(e.value)


def test_no_hint_when_the_wal_is_there(tmp_path):
    # A WAL-mode database that is simply not rocpd: its -wal is beside it, nothing is missing.
    path = tmp_path / "other.db"
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA wal_autocheckpoint = 0")
    c.execute("CREATE TABLE t (x)")
    c.commit()
    try:
        with pytest.raises(RocpdError) as e:
            rocpd.connect(path)
        assert "not a rocpd database" in str(e.value) and "-wal" not in str(e.value)
    finally:
        c.close()
