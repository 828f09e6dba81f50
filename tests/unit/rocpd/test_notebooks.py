import glob
import os

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed (test extra)")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed (test extra)")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))))
def test_notebook_runs_against_test_databases(path, tmp_path, make_run, monkeypatch):
    from rocpd import sol_example

    a, b, sol_db = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "sol" / "sol_results.db"
    raw = make_run(a, seed=1)
    make_run(b, seed=2, n_kernels=120)
    sol_db.parent.mkdir()
    sol_example.build(sol_db)
    monkeypatch.setenv("ROCPD_DB_A", str(a))
    monkeypatch.setenv("ROCPD_DB_B", str(b))
    monkeypatch.setenv("ROCPD_SOL_DB", str(sol_db))
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                      for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    if os.path.basename(path) == "counters_roofline.ipynb":
        # It read the test's --sol database (its path is printed), got to the roofline PNG and
        # the rocprofv3 CSV.
        assert str(sol_db) in outputs and (sol_db.parent / "roofline.png").exists()
        assert "sm90_xmma_gemm" in outputs and '"Counter_Name"' in outputs
    else:
        assert "gemm_fp16" in outputs  # the notebook read the test's databases, not its examples
    assert len(raw["kernels"]) > 0
