"""A script that imports torch after the session started, and uses the JIT, runs to the end
under every tracing flag (a source build with an exporting C++ runtime crashed or hung here)."""

from __future__ import annotations

import pytest
from support import MESSAGE, WORKLOADS, open_db, run_rocprof

FLAGS = [[], ["--marker-trace"], ["--sys-trace"], ["--kernel-trace", "--memory-copy-trace"],
         ["--runtime-trace", "--memory-allocation-trace"], ["--sample", "500"]]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: " ".join(f) or "default")
def test_import_torch_and_jit_inside_a_session(flags, tmp_path):
    pytest.importorskip("torch")
    r = run_rocprof("run", "-d", tmp_path, "-o", "jit", *flags, WORKLOADS / "torch_jit.py",
                    timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "sum 16.0" in r.stdout
    assert "scaled(Tensor x, int n) -> Tensor" in r.stdout
    assert "aten::add.Tensor(Tensor self, Tensor other" in r.stdout
    with open_db(tmp_path / "jit_results.db") as db:
        names = [n for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions")]
    assert "jit" in names
