import hashlib
import os
import sqlite3
import statistics
import subprocess
import sys

import pandas as pd
import pytest
from support import ROOT

import rocpd
from rocpd.errors import RocpdError


def _fingerprint(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest(), os.stat(path).st_mtime_ns


def test_inputs_never_modified(run_db, tmp_path):
    path, _ = run_db
    before = _fingerprint(path)
    with rocpd.connect(path) as db:
        db.kernel_stats()
        db.regions()
        with pytest.raises(RocpdError):
            db.execute("DELETE FROM rocpd_string")
        with pytest.raises(RocpdError):
            db.execute('INSERT INTO "rocpd_string_x" VALUES (1)')
    from rocpd.export import csv as csv_export
    with rocpd.connect(path) as db:
        csv_export.write(db, str(tmp_path / "o"))
    assert _fingerprint(path) == before


def test_regions_dataframe(run_db):
    path, raw = run_db
    with rocpd.connect(path) as db:
        df = db.regions(category="MARKER_CORE_API")
        assert sorted(df["name"]) == sorted(m[0] for m in raw["markers"])
        assert df["duration"].dtype == "int64"
        assert (df["duration"] == df["end"] - df["start"]).all()
        api = db.regions(category="CUDA_RUNTIME_API")
        assert len(api) == len(raw["api"])


def test_wal_database_being_written_reads(tmp_path, make_run):
    path = tmp_path / "wal.db"
    make_run(path, n_kernels=5)
    w = sqlite3.connect(path)
    w.execute("PRAGMA journal_mode=WAL")
    w.commit()
    sfx = [r[0] for r in w.execute("SELECT name FROM sqlite_master WHERE name LIKE 'rocpd_string_%'")][0]
    w.execute(f'INSERT INTO "{sfx}" (string) VALUES (?)', ("late-string",))
    w.commit()  # committed to the WAL, not checkpointed: the writer is still running
    with rocpd.connect(path) as db:
        names = [r[0] for r in db.execute("SELECT string FROM rocpd_string")]
    assert "late-string" in names
    w.close()


@pytest.mark.parametrize("content,msg", [
    (b"this is not sqlite at all" * 10, "not a readable SQLite database"),
    (None, "not a rocpd database"),
    ("v9", "unknown rocpd schema version"),
])
def test_bad_inputs_one_line_error(tmp_path, content, msg):
    path = tmp_path / "bad.db"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        c = sqlite3.connect(path)
        c.execute("CREATE TABLE t (x)")
        if content == "v9":
            c.execute("CREATE TABLE rocpd_metadata_abc (id INTEGER PRIMARY KEY, tag, value)")
            c.execute("INSERT INTO rocpd_metadata_abc (tag, value) VALUES ('schema_version', '9')")
        c.commit()
        c.close()
    with pytest.raises(RocpdError) as e:
        rocpd.connect(path)
    assert str(path) in str(e.value) and msg in str(e.value) and "\n" not in str(e.value)
    r = subprocess.run([sys.executable, "-m", "rocpd", "summary", str(path)], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and str(path) in r.stderr and msg in r.stderr


def test_many_databases_past_attach_limit(tmp_path, make_run):
    raws = []
    for i in range(12):
        raws.append(make_run(tmp_path / f"{i}.db", seed=i, pid=100 + i, rank=i, n_kernels=20))
    with rocpd.connect(str(tmp_path / "*.db")) as db:
        assert len(db.files) == 12
        n = db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
        assert n == 12 * 20
        stats = db.kernel_stats()
        by_rank = db.kernel_stats(by="rank")
        r3 = db.kernel_stats(rank=3)
    raw = pd.DataFrame([k for r in raws for k in r["kernels"]], columns=["name", "s", "e", "pid"])
    raw["d"] = raw["e"] - raw["s"]
    assert stats["Calls"].sum() == 240
    assert stats.set_index("Name")["TotalDurationNs"].to_dict() == raw.groupby("name")["d"].sum().to_dict()
    assert sorted(by_rank["rank"].unique()) == list(range(12))
    r3_raw = raw[raw["pid"] == 103]
    assert r3.set_index("Name")["Calls"].to_dict() == r3_raw.groupby("name").size().to_dict()


def test_directory_and_module_level_names(run_db, tmp_path):
    path, raw = run_db
    d = os.path.dirname(path)
    # ROCm's read_* give objects with attributes (iterating a DataFrame gave column names).
    agents = rocpd.read_agents(path)
    assert sorted((a.type, a.node_id, a.gpu_index) for a in agents) == [("CPU", 0, -1),
                                                                         ("GPU", 0, 0)]
    assert [a.product_name for a in rocpd.read_agents(path, "WHERE type = 'GPU'")] == ["Test GPU"]
    assert [p.pid for p in rocpd.read_processes(path)] == [1000]
    assert [p.command for p in rocpd.read_processes(path, "pid = 1000")] == ["python train.py"]
    assert [(t.tid, t.name) for t in rocpd.read_threads(path)] == [(1000, "MainThread [main]")]
    assert [n.hostname for n in rocpd.read_nodes(path)] == ["host0"]
    with rocpd.connect(path) as db:  # the DataFrame route, for pandas users
        assert list(db.processes()["pid"]) == [1000] and len(db.agents()) == 2
    with rocpd.connect(d) as db:
        assert rocpd.execute(db, "SELECT COUNT(*) FROM kernels").fetchone()[0] == len(raw["kernels"])


def test_two_attached_use_union_views(tmp_path, make_run):
    a = make_run(tmp_path / "a.db", seed=1, pid=1)
    b = make_run(tmp_path / "b.db", seed=2, pid=2)
    with rocpd.connect(tmp_path / "a.db", tmp_path / "b.db") as db:
        rows = db.execute("SELECT pid, COUNT(*) FROM kernels GROUP BY pid ORDER BY pid").fetchall()
        top = db.execute("SELECT SUM(total_calls) FROM top_kernels").fetchone()[0]
    assert rows == [(1, len(a["kernels"])), (2, len(b["kernels"]))]
    assert top == len(a["kernels"]) + len(b["kernels"])
    assert statistics.mean([1, 2]) == 1.5
