"""One unreadable database among several is skipped with a one-line warning (not with --strict)."""

import os

import pytest

import rocpd
from rocpd.errors import RocpdError


@pytest.fixture
def folder(tmp_path, make_run):
    """a.db and c.db good, x.db random bytes (sorted between them)."""
    raws = [make_run(tmp_path / f"{n}.db", seed=i, pid=i + 1, n_kernels=10)
            for i, n in enumerate("ac")]
    (tmp_path / "x.db").write_bytes(os.urandom(8192))
    return tmp_path, sum(len(r["kernels"]) for r in raws)


def _one_warning(err, path):
    assert err.count("\n") == 1, err
    assert err.startswith("rocpd: warning: ") and str(path) in err
    assert "not a readable SQLite database" in err and "skipped" in err


def test_connect_skips_bad_file_with_one_line_warning(folder, capsys):
    d, n = folder
    with rocpd.connect(d / "a.db", d / "x.db", d / "c.db") as db:
        assert db.paths == [str(d / "a.db"), str(d / "c.db")]
        assert [p for p, _ in db.skipped] == [str(d / "x.db")]
        assert db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == n
        assert db.kernel_stats()["Calls"].sum() == n
    _one_warning(capsys.readouterr().err, d / "x.db")


def test_connect_strict_raises(folder):
    d, _ = folder
    with pytest.raises(RocpdError) as e:
        rocpd.connect(d, strict=True)
    assert str(d / "x.db") in str(e.value) and "not a readable SQLite database" in str(e.value)


def test_summary_cli_skips_then_strict_fails(folder, cli):
    d, n = folder
    rc, out, err = cli("summary", d)
    assert rc == 0, err
    assert "KERNEL_STATS" in out
    _one_warning(err, d / "x.db")
    rc, out, err = cli("summary", d, "--strict")
    assert rc != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("rocpd: error: ") and str(d / "x.db") in err


def test_all_inputs_bad_is_an_error(tmp_path, cli):
    for n in ("x.db", "y.db"):
        (tmp_path / n).write_bytes(os.urandom(4096))
    with pytest.raises(RocpdError, match="none of the 2 databases is readable"):
        rocpd.connect(tmp_path)
    rc, out, err = cli("summary", tmp_path)
    assert rc != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("rocpd: error: ") and "x.db" in err


def test_single_bad_input_keeps_its_own_error(tmp_path):
    (tmp_path / "x.db").write_bytes(os.urandom(4096))
    with pytest.raises(RocpdError) as e:
        rocpd.connect(tmp_path / "x.db")
    assert str(e.value).startswith(f"{tmp_path / 'x.db'}: not a readable SQLite database")
