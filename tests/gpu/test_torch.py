"""PyTorch under rocprof: the kernels recorded equal torch.profiler's for the same steps (run
separately), ROCTx regions and Python launch sites are attached, pause drops GPU work."""

import ast
import json
import subprocess
import sys

import pytest
from gpuutil import ROOT, env, load_json_line, query, rocprof_run

WORKLOAD = ROOT / "tests/gpu/workloads/torch_steps.py"
STEPS = "6"

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("torch")
    ref = subprocess.run([sys.executable, str(WORKLOAD), "--mode", "torchprof", "--steps", STEPS,
                          "--trace", str(tmp / "trace.json")],
                         capture_output=True, text=True, env=env(), timeout=600)
    assert ref.returncode == 0, ref.stderr
    db, p = rocprof_run(tmp, "--sys-trace", str(WORKLOAD), "--steps", STEPS)
    return load_json_line(ref.stdout), db, tmp


def test_kernel_count_and_names_match_torch_profiler(runs):
    ref, db, _ = runs
    names = [r[0] for r in query(db, "SELECT name FROM kernels")]
    assert ref["kernels"] > 0
    assert len(names) == ref["kernels"], (len(names), ref["kernels"])
    assert sorted(set(names)) == ref["names"]
    assert query(db, "SELECT value FROM rocpd_metadata WHERE tag = 'rocprof.dropped_records'") == [("0",)]


def test_forward_region_and_launch_site(runs):
    _, db, _ = runs
    fwd = query(db, "SELECT count(*) FROM kernels WHERE roctx_range = 'forward'")[0][0]
    assert fwd >= int(STEPS) * 5
    # As rocprofv3: the dispatch's region is its kernel's name (never NULL: ROCm's views
    # INNER-JOIN it); the range is reached through the event's parent_stack_id.
    assert query(db, "SELECT count(*) FROM kernels WHERE region IS NULL OR region != name") == [(0,)]
    from rocpd import _schema

    sites = query(db, f"SELECT {_schema.line_info_sql('E')}, {_schema.call_stack_sql('E')} "
                      "FROM rocpd_kernel_dispatch K "
                      "JOIN rocpd_event E ON E.id = K.event_id WHERE K.id IN "
                      "(SELECT id FROM kernels WHERE roctx_range = 'forward')")
    infos = [json.loads(li) for li, _ in sites]
    assert all(i.get("file", "").endswith("torch_steps.py") for i in infos), infos[:3]
    assert {i["function"] for i in infos} >= {"step"} or {i["function"] for i in infos} >= {"Net.forward"}
    assert all(json.loads(cs)[0] == li for li, cs in zip(infos, (c for _, c in sites), strict=True))
    # The line is a line of the function named, in the script (ast ranges of its functions).
    tree = ast.parse(WORKLOAD.read_text())
    spans = {n.name: (n.lineno, n.end_lineno) for n in tree.body if isinstance(n, ast.FunctionDef)}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):  # methods as Class.method
        spans.update({f"{cls.name}.{m.name}": (m.lineno, m.end_lineno) for m in cls.body
                      if isinstance(m, ast.FunctionDef)})
    for i in infos:
        lo, hi = spans[i["function"]]
        assert lo < i["line"] <= hi, i
    # Captured without the GIL, resolved later: nothing lost on the way.
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata WHERE tag = 'rocprof.cupti.launch_sites'"))
    counters = dict(kv.split("=") for kv in meta["rocprof.cupti.launch_sites"].split(","))
    assert int(counters["captured"]) > 0 and counters["faults"] == "0", counters
    assert counters["queue_full"] == "0" and counters["table_full"] == "0", counters


def test_api_regions_and_copies(runs):
    _, db, _ = runs
    cats = dict(query(db, "SELECT category, count(*) FROM regions GROUP BY category"))
    assert cats.get("CUDA_RUNTIME_API", 0) > 0 and cats.get("MARKER_CORE_API", 0) > 0
    unmatched = query(db, "SELECT count(*) FROM kernels K WHERE NOT EXISTS (SELECT 1 FROM regions R "
                          "WHERE R.corr_id = K.corr_id AND R.category LIKE 'CUDA_%_API')")
    assert unmatched == [(0,)]


def test_pause_drops_gpu_work(tmp_path, runs):
    _, db_full, _ = runs
    db, _ = rocprof_run(tmp_path, "--sys-trace", str(WORKLOAD), "--steps", STEPS, "--paused-steps", "3")
    assert query(db, "SELECT count(*) FROM kernels") == query(db_full, "SELECT count(*) FROM kernels")


def test_cupti_held_by_torch_profiler_is_reported(tmp_path):
    db, p = rocprof_run(tmp_path, "--kernel-trace", str(WORKLOAD), "--mode", "torchprof", "--steps", "2",
                        check=False)
    assert p.returncode == 0, p.stderr  # the application is never broken by us
    assert db.exists()


def test_stats_on_train_cifar(tmp_path):
    script = ROOT / "examples/train_cifar.py"
    if not script.exists():
        pytest.skip("examples/train_cifar.py not present")
    db, p = rocprof_run(tmp_path, "--sys-trace", "--stats", "-S", str(script), "--epochs", "1", "--steps", "4")
    out = p.stdout + p.stderr
    assert "KERNEL_DISPATCH" in out or "kernel" in out.lower()
    top = query(db, "SELECT name, total_calls FROM top_kernels")
    assert top and top[0][1] > 0
    assert list(tmp_path.glob("t_kernel_stats.csv"))


def test_runtime_queries_left_out_unless_asked(tmp_path, runs):
    """--sys-trace leaves cudaGetDevice & co. out at the source (as torch.profiler drops them),
    and the driver queries the runtime makes inside; --runtime-trace-all records them. The
    metadata says which."""
    import re

    def api_names(db):
        rows = query(db, "SELECT DISTINCT name FROM regions WHERE category IN "
                         "('CUDA_RUNTIME_API', 'CUDA_DRIVER_API')")
        return {re.sub(r"_v\d+$", "", n) for (n,) in rows}  # cudaGetDevice_v3020 -> cudaGetDevice

    _, db, _ = runs
    left = dict(query(db, "SELECT tag, value FROM rocpd_metadata"))["rocprof.cupti.api_left_out"]
    if left.startswith("none"):
        pytest.skip(f"this CUPTI cannot leave API calls out: {left}")
    left_out = {re.sub(r"_v\d+$", "", n) for n in left.split(",")}
    assert {"cudaGetDevice", "cudaGetLastError", "cuDevicePrimaryCtxGetState"} <= left_out, left
    assert not api_names(db) & left_out, api_names(db) & left_out
    db2, _ = rocprof_run(tmp_path, "--sys-trace", "--runtime-trace-all", str(WORKLOAD), "--steps", "2")
    left2 = dict(query(db2, "SELECT tag, value FROM rocpd_metadata"))["rocprof.cupti.api_left_out"]
    assert left2 == "none (--runtime-trace-all)"
    assert "cudaGetDevice" in api_names(db2), sorted(api_names(db2))
