"""Per-kernel hardware counters on an NVIDIA GPU (CUPTI range profiler, kernel replay): the
done-when of issue 14 items 2 and 3. Figures worth keeping are measured side by side by
benchmarks/gpu_counters.py; these tests hold the thresholds."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from gpuutil import ROOT, env, load_json_line, query, rocprof_run

sys.path[:0] = [str(ROOT / "python"), str(ROOT)]


def _counters_live():
    from rocprof import backends

    s = next(s for s in backends.statuses() if s["name"] == "cupti-counters")
    return s["live"], s["reason"] or "not live"


LIVE, REASON = _counters_live()
pytestmark = pytest.mark.skipif(not LIVE, reason=f"no per-kernel counters here: {REASON}")


def _sol_env(tmp_path):
    e = env()
    e["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # peaks measured afresh, into the test's folder
    return e


def _meta(db):
    return dict(query(db, "SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.counters.%'"))


def test_avail_lists_the_gpus_counters():
    p = subprocess.run([sys.executable, "-m", "rocprof", "avail"], capture_output=True, text=True,
                       env=env(), timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(r"GPU 0: .* \(chip (\w+)\): (\d+) counters", p.stdout)
    assert m and int(m.group(2)) > 500, p.stdout[:500]
    assert re.search(r"^  dram__bytes_read\s+counter\s+byte\s+# of bytes read from DRAM", p.stdout, re.M)


def test_pmc_bytes_read_of_a_copy_equal_its_size(tmp_path):
    db, p = rocprof_run(tmp_path, "--pmc", "dram__bytes_read.sum", "FETCH_SIZE", "WRITE_SIZE",
                        str(ROOT / "tests/gpu/workloads/counters_copy.py"), "--mib", "1024")
    n = load_json_line(p.stdout)["bytes"]
    meta = _meta(db)
    assert meta["rocprof.counters.status"] == "on", meta
    assert meta["rocprof.counters.serialized"].startswith("1")
    rows = dict(query(db, "SELECT counter_name, value FROM counters_collection WHERE roctx_range = 'copy'"))
    print(f"copy of {n} bytes: dram read {rows.get('dram__bytes_read.sum')}, write "
          f"{rows.get('dram__bytes_write.sum')}; passes {meta.get('rocprof.counters.passes')}")
    assert rows["dram__bytes_read.sum"] == pytest.approx(n, rel=0.02)
    # Every dispatch got every counter, and each dispatch is stored once (no replayed copies).
    dispatches = query(db, "SELECT count(*), count(DISTINCT dispatch_id) FROM kernels")[0]
    assert dispatches[0] == dispatches[1] > 0
    per = query(db, "SELECT dispatch_id, count(*) FROM counters_collection GROUP BY dispatch_id")
    assert len(per) == dispatches[0] and {c for _, c in per} == {2}
    assert "rocprof.counters.unmatched_values" not in meta
    # CUPTI gives replayed kernels no times: each takes its launch's start and the duration the
    # hardware measured, collected for it (and not stored as a value, as it was not asked for).
    assert "gpu__time_duration" in meta["rocprof.counters.kernel_times"], meta
    assert not query(db, "SELECT 1 FROM counters_collection WHERE counter_name LIKE 'gpu__time%'")
    spans = query(db, 'SELECT start, "end" FROM kernels ORDER BY start')
    assert all(0 < s < e for s, e in spans), spans[:5]
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)), "kernels overlap"
    copy_ns = query(db, "SELECT MAX(duration) FROM kernels WHERE roctx_range = 'copy'")[0][0]
    rate = 2 * n / (copy_ns / 1e9)  # read and write
    print(f"copy kernel {copy_ns / 1e6:.3f} ms, {rate / 1e12:.2f} TB/s")
    assert 1e10 < rate < 2e13, "a copy's bandwidth off by orders of magnitude: wrong time units"


@pytest.fixture(scope="module")
def sol_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sol")
    e = _sol_env(tmp)
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp), "-o", "t", "--sol",
                        str(ROOT / "examples/sol_demo.py"), "--repeat", "2"],
                       capture_output=True, text=True, env=e, cwd=ROOT, timeout=1200)
    assert p.returncode == 0, p.stdout + p.stderr
    import rocpd
    from rocpd.counters import sol

    db = tmp / "t_results.db"
    with rocpd.connect(str(db)) as c:
        res = sol.compute(c)
    return db, res


def _gemm(res):
    k = res.kernels
    from rocpd.counters import sol

    k = k[[sol.dominant(r) == "tensor_bf16" for _, r in k.iterrows()]]
    assert len(k), "no bf16 tensor kernel among " + ", ".join(res.kernels["kernel_name"])
    return k.sort_values("seconds", ascending=False).iloc[0]


def test_sol_bf16_matmul_is_counted_right_and_near_the_tensor_roof(sol_run):
    db, res = sol_run
    g = _gemm(res)
    n = 8192
    pct = 100 * g["rate_tensor_bf16"] / g["peak_tensor_bf16"]
    analytic = 2 * n ** 3 * g["dispatches"] / g["seconds"]  # FLOPs the matmul must do / its time
    print(f"{g['kernel_name']}: {g['rate_tensor_bf16'] / 1e12:.1f} TFLOP/s counted, "
          f"{analytic / 1e12:.1f} from 2N^3/t, {pct:.1f} % of {g['peak_tensor_bf16'] / 1e12:.1f}")
    assert g["flops_tensor_bf16"] / g["dispatches"] == pytest.approx(2 * n ** 3, rel=0.10)
    assert g["rate_tensor_bf16"] == pytest.approx(analytic, rel=0.10)
    assert pct >= 70.0


def test_sol_copy_reaches_the_empirical_dram_bandwidth(sol_run):
    db, res = sol_run
    copy = copy_kernel(res)
    emp = res.peaks[int(copy["agent_id"])].empirical.get("dram")
    assert emp, "no empirical DRAM peak in the run (rocprof peaks did not run?)"
    pct = 100 * copy["rate_dram"] / emp
    print(f"{copy['kernel_name']}: {copy['rate_dram'] / 1e12:.2f} TB/s = {pct:.1f} % of the "
          f"empirical {emp / 1e12:.2f} TB/s")
    assert pct >= 80.0


def copy_kernel(res):
    """sol_demo's y = x * 1.0 over 1 GiB: of its elementwise kernels, the one moving the most."""
    k = res.kernels[res.kernels["kernel_name"].str.contains("elementwise", regex=False)]
    assert len(k), "no elementwise kernel among " + ", ".join(res.kernels["kernel_name"])
    return k.sort_values("bytes_dram", ascending=False).iloc[0]


def test_sol_cli_and_roofline_on_the_real_run(sol_run, tmp_path):
    db, _ = sol_run
    p = subprocess.run([sys.executable, "-m", "rocpd", "sol", str(db), "--roofline",
                        str(tmp_path / "roof.png")], capture_output=True, text=True, env=env(),
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "SPEED OF LIGHT: run on" in p.stdout and (tmp_path / "roof.png").stat().st_size > 10_000


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu (Nsight Compute) not on PATH")
def test_bf16_matmul_flops_match_nsight_compute(sol_run, tmp_path):
    _, res = sol_run
    ours = _gemm(res)["rate_tensor_bf16"]
    theirs = ncu_matmul_flops(tmp_path)
    print(f"bf16 8192^3 matmul: rocprof {ours / 1e12:.1f} TFLOP/s, ncu {theirs / 1e12:.1f} TFLOP/s")
    assert ours == pytest.approx(theirs, rel=0.10)


def ncu_matmul_flops(tmp_path, n: int = 8192) -> float:
    """FLOP/s of the sol_demo matmul as Nsight Compute measures it (the same tensor-op metric,
    over its own kernel duration)."""
    out = tmp_path / "ncu.csv"
    metrics = "sm__ops_path_tensor_src_bf16_dst_fp32.sum,gpu__time_duration.sum"
    # As the run under rocprof: clocks and caches left alone (ncu locks base clocks and
    # flushes caches by default, which slows this matmul by ~10 %).
    cmd = ["ncu", "--csv", "--print-units", "base", "--clock-control", "none",
           "--cache-control", "none", "--metrics", metrics, "-k",
           "regex:gemm|nvjet|xmma|cutlass|sm90", "--launch-count", "1", sys.executable,
           str(ROOT / "examples/sol_demo.py"), "--n", str(n), "--copy-mib", "64", "--repeat", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=1200)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out.write_text(p.stdout)
    values = {}
    import csv
    import io

    lines = [ln for ln in p.stdout.splitlines() if ln.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        values[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    ops, ns = values["sm__ops_path_tensor_src_bf16_dst_fp32.sum"], values["gpu__time_duration.sum"]
    return ops / (ns / 1e9)


def test_sol_metadata_names_the_method_and_passes(sol_run):
    db, _ = sol_run
    meta = _meta(db)
    assert meta["rocprof.counters.origin"] == "sol" and meta["rocprof.counters.status"] == "on"
    assert "kernel replay" in meta["rocprof.counters.method"]
    assert re.fullmatch(r"(GPU\d+=\d+,?)+", meta["rocprof.counters.passes"]), meta
    opts = json.loads(query(db, "SELECT value FROM rocpd_metadata WHERE tag='rocprof.options'")[0][0])
    assert opts["empirical_peaks"], "the run keeps the peaks it was compared with"
    assert os.path.basename(str(db)) == "t_results.db"


def test_sol_kernels_last_their_measured_duration(sol_run):
    db, _ = sol_run
    rows = query(db, "SELECT duration, value FROM counters_collection "
                     "WHERE counter_name = 'gpu__time_duration.sum'")
    assert rows and all(d > 0 and abs(d - v) <= 1 for d, v in rows), rows[:5]


def test_sol_no_unexplained_value_above_an_empirical_peak(sol_run):
    """The run's peaks were measured afresh by kernels that stress each resource: the GEMM and
    the copy stay within reach of them, L2 is measured above DRAM, and anything above an
    empirical peak carries its reason in the table."""
    from rocpd.counters import sol_format

    db, res = sol_run
    print(sol_format.format_sol(res))
    over = res.run[res.run["pct_of_empirical"] > 100]
    assert (over["empirical_note"] != "").all(), over
    pk = res.peaks[int(_gemm(res)["agent_id"])]
    assert pk.empirical.get("l2", 0) > 1.3 * pk.empirical.get("dram", 0), pk.empirical
    for key in ("tensor_bf16", "tensor_fp16", "fp32", "fp64", "fp16"):
        assert pk.empirical.get(key), f"no empirical {key} peak: {pk.empirical}"
    # A short burst can run above the sustained peak the measurement finds (clocks fall under a
    # long GEMM loop): what the contract asks is that such a value is shown with its reason.
    above = {(name, label): note for name, label, _, note in sol_format.kernels_above_empirical(res)}
    assert all(above.values()), above
    g, copy = _gemm(res), copy_kernel(res)
    for row, key, label in ((g, "tensor_bf16", "BF16 tensor"), (copy, "dram", "DRAM bandwidth")):
        pct = 100 * row[f"rate_{key}"] / pk.empirical[key]
        print(f"{label}: {pct:.1f} % of the empirical peak")
        if pct > 100:
            assert (sol_format.clip(str(row["kernel_name"])), label) in above, (label, pct, above)
