"""Connection.sources(): one object per input database, with what per-file readers need."""

import pathlib
import re

import pytest

import rocpd
from rocpd import _schema
from rocpd.io.merge import merge_files


def test_one_source_per_input_in_path_order(tmp_path, make_run):
    make_run(tmp_path / "a.db", pid=100, n_kernels=10)
    make_run(tmp_path / "b.db", pid=200, n_kernels=15)
    merge_files([tmp_path / "a.db", tmp_path / "b.db"], str(tmp_path / "m.db"))
    make_run(tmp_path / "c.db", pid=300, n_kernels=20)
    with rocpd.connect(tmp_path / "m.db", tmp_path / "c.db") as db:
        srcs = db.sources()
        assert [s.path for s in srcs] == db.paths and [s.index for s in srcs] == [0, 1]
        assert [len(s.parts) for s in srcs] == [2, 1]  # a merged file holds one part per run
        assert [g for s in srcs for g in s.guids] == [p.guid for p in db.parts]
        assert [s.alias for s in srcs] == ["db0", "db1"]
        # each source's connection sees its own file only
        assert [s.conn.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] for s in srcs] == [25, 20]
        for s in srcs:
            for part, table in s.tables("kernel_dispatch"):
                assert table == f'main."rocpd_kernel_dispatch{_schema.suffix_of(part.guid)}"'
                n = s.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                assert n == s.conn.execute("SELECT COUNT(*) FROM kernels WHERE guid = ?",
                                           (part.guid,)).fetchone()[0]
        # the union connection attaches each source under its alias
        aliases = [r[1] for r in db.conn.execute("PRAGMA database_list")]
        assert {"db0", "db1"} <= set(aliases)
        with pytest.raises(ValueError, match="unknown rocpd table"):
            srcs[0].tables("sqlite_master; DROP")


def test_merged_copy_past_attach_limit_is_no_source(tmp_path, make_run):
    for i in range(12):
        make_run(tmp_path / f"{i:02}.db", seed=i, pid=100 + i, n_kernels=3)
    with rocpd.connect(str(tmp_path / "*.db")) as db:
        db.execute("SELECT COUNT(*) FROM kernels").fetchone()  # makes the merged copy
        assert len(db.files) == 13
        assert [s.path for s in db.sources()] == db.paths and len(db.paths) == 12


def test_readers_use_sources_not_file_slices():
    root = pathlib.Path(rocpd.__file__).parent
    offenders = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1)
                 if re.search(r"files\[\s*:|len\(\w+\.paths\)", line)]
    assert offenders == []
