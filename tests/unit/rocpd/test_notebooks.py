import glob
import os

import pytest
import support

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed (test extra)")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed (test extra)")

ROOT = str(support.ROOT)
# What each notebook's outputs must show: proof it read the databases it was meant to read.
EXPECT = {
    "rocpd_walkthrough.ipynb": ["gemm_fp16", "rocpd connection", "kernel stats"],
    "rocpd_ranks.ipynb": ["rank 37 is the slowest by compute per step", "ranks x steps heat map",
                          "image/png", "gemm_bf16_tn_128x128"],
    "counters_roofline.ipynb": ["sm90_xmma_gemm", '"Counter_Name"'],
    "rocpd_diff.ipynb": ["first: model.py:23 kernel", "copy became pageable (PINNED→DEVICE",
                         "no significant change: step time", "diff.html",
                         "planted changes found: model.py:23 first"],
    "rocpd_memory.ipynb": ["planted leak found: train.py:30 at 4.00 MiB per step",
                           "planted 1 GiB temporary found at the peak: train.py:40",
                           "image/svg+xml", "GPU memory peak +992.00 MiB"],
}


def _execute(name, tmp_path):
    nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            data = o.get("data", {})
            out += [str(data.get("text/plain", "")), str(data.get("text/html", "")), str(o.get("text", ""))]
            out += [k for k in data if k.startswith("image/")]
    return "".join(out)


def test_every_notebook_is_tested():
    found = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))}
    assert found == set(EXPECT)


def test_walkthrough_against_test_databases(tmp_path, make_run, monkeypatch):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    raw = make_run(a, seed=1)
    make_run(b, seed=2, n_kernels=120)
    monkeypatch.setenv("ROCPD_DB_A", str(a))
    monkeypatch.setenv("ROCPD_DB_B", str(b))
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outputs = _execute("rocpd_walkthrough.ipynb", tmp_path)
    for text in EXPECT["rocpd_walkthrough.ipynb"]:
        assert text in outputs  # the notebook read the test's databases, not its examples
    assert len(raw["kernels"]) > 0


def test_ranks_notebook_finds_the_straggler(tmp_path, monkeypatch):
    """The generated 64-rank run; its last cell asserts the straggler is rank 37, and (with dask
    installed) that the Dask cluster's tables equal the local ones."""
    monkeypatch.delenv("ROCPD_RANKS_DIR", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outputs = _execute("rocpd_ranks.ipynb", tmp_path)
    for text in EXPECT["rocpd_ranks.ipynb"]:
        assert text in outputs
    try:
        import distributed  # noqa: F401
        assert "Dask result identical to the local one: True" in outputs
    except ImportError:
        assert "dask not installed: skipped" in outputs


def test_counters_notebook_reaches_the_roofline(tmp_path, monkeypatch):
    """From the test's --sol database (its path is printed) to the roofline PNG and the
    rocprofv3 counter CSV."""
    from rocpd.counters import sol_example

    sol_db = tmp_path / "sol" / "sol_results.db"
    sol_db.parent.mkdir()
    sol_example.build(sol_db)
    monkeypatch.setenv("ROCPD_SOL_DB", str(sol_db))
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outputs = _execute("counters_roofline.ipynb", tmp_path)
    assert str(sol_db) in outputs and (sol_db.parent / "roofline.png").exists()
    for text in EXPECT["counters_roofline.ipynb"]:
        assert text in outputs


def test_diff_notebook_names_the_planted_changes(tmp_path, monkeypatch):
    """Its own generated pair (no ROCPD_DIFF_A/B): the slower GEMM's line first, the pageable
    upload listed, the unchanged pair without significant change, the page written."""
    monkeypatch.delenv("ROCPD_DIFF_A", raising=False)
    monkeypatch.delenv("ROCPD_DIFF_B", raising=False)
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outputs = _execute("rocpd_diff.ipynb", tmp_path)
    for text in EXPECT["rocpd_diff.ipynb"]:
        assert text in outputs, text


def test_memory_notebook_names_the_planted_leak_and_peak(tmp_path, monkeypatch):
    """Its own generated runs (no ROCPD_MEMORY_DB): the leak's line and growth per step, the
    1 GiB temporary at the peak, the flame graph drawn, the diff's memory line."""
    monkeypatch.delenv("ROCPD_MEMORY_DB", raising=False)
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outputs = _execute("rocpd_memory.ipynb", tmp_path)
    for text in EXPECT["rocpd_memory.ipynb"]:
        assert text in outputs, text
