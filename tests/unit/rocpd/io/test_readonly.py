"""Analysis connections never write: an SQLite authorizer refuses ATTACH, VACUUM INTO and writes."""

import hashlib
import sqlite3

import pytest

import rocpd
from rocpd.errors import RocpdError
from rocpd.testing import DatabaseBuilder

READ_ONLY = "analysis connections are read-only"




@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ro")
    paths = []
    for i in range(2):
        with DatabaseBuilder(d / f"{i}.db", pid=i + 1) as b:
            for k in range(5):
                b.kernel("gemm", 1000 + 100 * k, 1050 + 100 * k)
        paths.append(str(d / f"{i}.db"))
    return paths


@pytest.fixture(params=[1, 2], ids=["one-file", "two-files"])
def dbs(request, two_files):
    # One file is read on its own connection; two are ATTACHed by the Connection itself first.
    return two_files[: request.param]


def _digests(paths):
    return [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in paths]


@pytest.mark.parametrize("sql", ["ATTACH '{target}' AS x", "VACUUM INTO '{target}'",
                                 "ATTACH 'relative.db' AS x", "VACUUM INTO 'relative.db'"])
def test_query_cli_refuses_attach_and_vacuum_into_no_file(tmp_path, monkeypatch, cli, dbs, sql):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "created.db"
    before = _digests(dbs)
    rc, out, err = cli("query", *dbs, "--sql", sql.format(target=target))
    assert rc != 0 and out == ""
    assert err.count("\n") == 1, err
    assert "ATTACH is not allowed" in err and READ_ONLY in err, err
    assert not target.exists() and not (tmp_path / "relative.db").exists()
    assert _digests(dbs) == before


@pytest.mark.parametrize("sql,what", [
    ("DETACH db0", "DETACH"),
    ("CREATE TEMP TABLE t (x)", "CREATE TEMP TABLE"),
    ("CREATE TEMP VIEW v AS SELECT 1", "CREATE TEMP VIEW"),
    ("DROP VIEW kernels", "DROP TEMP VIEW"),
    ("DELETE FROM {string}", "DELETE"),
    ("INSERT INTO {string} (string) VALUES ('x')", "INSERT"),
    ("UPDATE {string} SET string = 'x'", "UPDATE"),
    ("CREATE INDEX {schema}.i ON {bare} (string)", "CREATE INDEX"),
    ("ALTER TABLE {string} ADD COLUMN y", "ALTER TABLE"),
    ("REINDEX", "REINDEX"),
    ("PRAGMA writable_schema = 1", "PRAGMA writable_schema"),
    ("PRAGMA query_only = 0", "PRAGMA query_only"),
    ("PRAGMA user_version = 7", "PRAGMA user_version"),
    ("PRAGMA wal_checkpoint", "PRAGMA wal_checkpoint"),
    ("ANALYZE", "ANALYZE"),
    ("VACUUM", "ATTACH"),  # VACUUM attaches its scratch copy first
])
def test_writes_refused_with_the_action_named(dbs, sql, what):
    with rocpd.connect(*dbs) as db:
        # The real (guid-suffixed) table, not the view over it: writing a view fails anyway.
        schema = "main" if len(dbs) == 1 else "db0"
        bare = db.parts[0].table("string")
        with pytest.raises(RocpdError) as e:
            db.execute(sql.format(string=f"{schema}.{bare}", schema=schema, bare=bare))
        msg = str(e.value)
        assert msg.startswith(f"{what} is not allowed: {READ_ONLY}") and "\n" not in msg, msg
        # The connection stays usable after a refusal, and reads are not mistaken for refusals.
        assert db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 5 * len(dbs)
        with pytest.raises(RocpdError) as e:
            db.execute("SELECT * FROM no_such_table")
        assert "not allowed" not in str(e.value)


@pytest.mark.parametrize("sql", ["PRAGMA table_info(rocpd_string)", "PRAGMA user_version",
                                 "PRAGMA database_list", "PRAGMA query_only",
                                 "SELECT * FROM pragma_table_info('kernels')",
                                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                                 " WHERE i < 3) SELECT COUNT(*) FROM n",
                                 "SELECT json_extract('{\"a\": 1}', '$.a')"])
def test_reads_allowed(dbs, sql):
    with rocpd.connect(*dbs) as db:
        assert db.execute(sql).fetchall()


def test_transactions_allowed(dbs):
    with rocpd.connect(*dbs) as db:
        db.execute("BEGIN")
        db.execute("SAVEPOINT s")
        db.execute("RELEASE s")
        db.execute("COMMIT")


def test_internal_connections_guarded(dbs):
    with rocpd.connect(*dbs) as db:
        for f in db.files:
            with pytest.raises(sqlite3.DatabaseError):
                f.conn.execute("ATTACH ':memory:' AS m")
