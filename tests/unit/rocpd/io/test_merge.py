"""rocpd merge: the output is checked against every input before anything is touched."""

import hashlib
import os

import pytest

from rocpd.errors import RocpdError
from rocpd.io.merge import merge_files


def _digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()




@pytest.mark.parametrize("spelling", ["plain", "dot", "absolute", "symlink", "hardlink"])
def test_merge_output_that_is_an_input_is_refused_and_input_kept(tmp_path, monkeypatch, cli,
                                                                  make_run, spelling):
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "a.db", seed=1, pid=1, n_kernels=10)
    make_run(tmp_path / "b.db", seed=2, pid=2, n_kernels=10)
    before = _digest(tmp_path / "a.db")
    if spelling == "symlink":
        os.symlink(tmp_path / "a.db", tmp_path / "link.db")
        out = "link.db"
    elif spelling == "hardlink":  # another name, same inode: only st_ino/st_dev can tell
        os.link(tmp_path / "a.db", tmp_path / "hard.db")
        out = "hard.db"
    else:
        out = {"plain": "a.db", "dot": "./a.db", "absolute": str(tmp_path / "a.db")}[spelling]
    rc, stdout, stderr = cli("merge", "a.db", "b.db", "-o", out, "--force")
    assert rc != 0
    assert stderr.count("\n") == 1 and "output is also an input" in stderr, stderr
    assert (tmp_path / "a.db").is_file() and _digest(tmp_path / "a.db") == before
    assert os.path.exists(tmp_path / out)


def test_merge_output_is_input_library_call(tmp_path, make_run):
    make_run(tmp_path / "a.db", seed=1, pid=1, n_kernels=10)
    before = _digest(tmp_path / "a.db")
    with pytest.raises(RocpdError, match="output is also an input"):
        merge_files([tmp_path / "a.db"], str(tmp_path / "a.db"), overwrite=True)
    assert _digest(tmp_path / "a.db") == before


def test_merge_force_replaces_an_unrelated_output(tmp_path, cli, make_run):
    make_run(tmp_path / "a.db", seed=1, pid=1, n_kernels=10)
    make_run(tmp_path / "b.db", seed=2, pid=2, n_kernels=10)
    out = tmp_path / "m.db"
    out.write_bytes(b"old")
    rc, _, stderr = cli("merge", tmp_path / "a.db", tmp_path / "b.db", "-o", out)
    assert rc != 0 and "output exists" in stderr
    rc, stdout, stderr = cli("merge", tmp_path / "a.db", tmp_path / "b.db", "-o", out, "--force")
    assert rc == 0, stderr
    assert stdout.strip() == f"wrote {out}" and out.stat().st_size > 3


def test_merged_file_reads_together_with_another(tmp_path, make_run):
    # The merged file's views once named main."rocpd_..._<guid>": SQLite then refuses to ATTACH
    # it under another name ("view cannot reference objects in database main").
    import rocpd

    make_run(tmp_path / "a.db", seed=1, pid=1, n_kernels=10)
    make_run(tmp_path / "b.db", seed=2, pid=2, n_kernels=12)
    make_run(tmp_path / "c.db", seed=3, pid=3, n_kernels=14)
    merge_files([tmp_path / "a.db", tmp_path / "b.db"], str(tmp_path / "m.db"))
    with rocpd.connect(tmp_path / "m.db", tmp_path / "c.db") as db:
        assert db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 36
        assert db.execute("SELECT COUNT(DISTINCT guid) FROM rocpd_kernel_dispatch").fetchone()[0] == 3
