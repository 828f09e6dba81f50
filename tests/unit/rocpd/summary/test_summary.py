import csv
import json
import os
import statistics
import subprocess
import sys

import pandas as pd
import pytest
from support import ROOT

import rocpd
from rocpd.diff.compare import compare
from rocpd.summary import stats


def _expected(rows):
    """Independent computation with the statistics module on the raw rows."""
    by = {}
    for name, s, e, *_ in rows:
        by.setdefault(name, []).append(e - s)
    total = sum(sum(v) for v in by.values())
    return {n: (len(v), sum(v), statistics.mean(v), 100.0 * sum(v) / total, min(v), max(v),
                statistics.stdev(v) if len(v) > 1 else 0.0) for n, v in by.items()}


def _check(df, rows, rounded=False):
    # rounded: a stats CSV, whose floats rocprofv3 rounds (Percentage to 2 decimals, others to 6)
    exp = _expected(rows)
    assert list(df.columns[-8:]) == ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage",
                                     "MinNs", "MaxNs", "StdDev"]
    assert set(df["Name"]) == set(exp)
    for _, r in df.iterrows():
        n, tot, avg, pct, mn, mx, sd = exp[r["Name"]]
        assert (r["Calls"], r["TotalDurationNs"], r["MinNs"], r["MaxNs"]) == (n, tot, mn, mx)
        pa, fa = (5e-3, 5e-7) if rounded else (None, 1e-6)
        assert r["AverageNs"] == pytest.approx(avg, abs=fa)
        assert r["Percentage"] == pytest.approx(pct, abs=pa)
        assert r["StdDev"] == pytest.approx(sd, rel=1e-9, abs=fa)
    assert list(df["TotalDurationNs"]) == sorted(df["TotalDurationNs"], reverse=True)


def test_kernel_marker_api_copy_stats_match_raw(run_db):
    path, raw = run_db
    with rocpd.connect(path) as db:
        _check(db.kernel_stats(), raw["kernels"])
        _check(db.region_stats("MARKER_CORE_API"), raw["markers"])
        _check(db.region_stats("CUDA_RUNTIME_API"), raw["api"])
        _check(db.memory_copy_stats(), raw["copies"])


def test_filters(run_db):
    path, raw = run_db
    with rocpd.connect(path) as db:
        t0, t1 = db.run_bounds()
        k = db.kernels(include="gemm|relu", exclude="relu")
        assert set(k["name"]) == {"gemm_fp16"}
        assert len(k) == sum(1 for r in raw["kernels"] if r[0] == "gemm_fp16")
        w = db.kernels(window=(0, 100_000))
        assert len(w) == sum(1 for r in raw["kernels"] if t0 <= r[1] < t0 + 100_000)
        half = db.kernel_stats(pct=(0, 50))
        mid = t0 + (t1 - t0) // 2
        assert half["Calls"].sum() == sum(1 for r in raw["kernels"] if r[1] < mid)
        step = [m for m in raw["markers"] if m[0] == "step"]
        b = db.kernels(between=("step", "step"))
        assert len(b) == sum(1 for r in raw["kernels"] if step[0][1] <= r[1] <= step[0][2])
        assert len(db.kernels(pid=999)) == 0 and len(db.kernels(pid=1000)) == len(raw["kernels"])
        with pytest.raises(TypeError):
            db.kernels(bogus=1)


def test_stats_api_writes_rocprofv3_files_and_drops(run_db, tmp_path):
    path, raw = run_db
    prefix = str(tmp_path / "out" / "run")
    os.makedirs(os.path.dirname(prefix))
    written = stats.write_stats_csv(path, prefix)
    names = {os.path.basename(p) for p in written}
    for stem in ("kernel", "marker_api", "cuda_runtime_api", "memory_copy", "domain"):
        assert f"run_{stem}_stats.csv" in names
    assert "run_dropped_records.csv" in names
    df = pd.read_csv(prefix + "_kernel_stats.csv")
    _check(df, raw["kernels"], rounded=True)
    with open(prefix + "_kernel_stats.csv") as fh:
        head = fh.readline().strip()
    assert head == '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"'
    dom = pd.read_csv(prefix + "_domain_stats.csv").set_index("Name")
    assert dom.loc["KERNEL_DISPATCH", "Calls"] == len(raw["kernels"])
    text = stats.format_summary(path, top=2, units="us")
    assert "KERNEL_STATS" in text and "TotalDurationUs" in text and "Dropped records: 7 LOST" in text


def test_summary_cli_and_busy(run_db):
    path, raw = run_db
    r = subprocess.run([sys.executable, "-m", "rocpd", "summary", path, "--busy"], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert "MARKER_API_STATS" in r.stdout and "Dropped records" in r.stdout
    with rocpd.connect(path) as db:
        busy = db.busy()
    gpu = sum(e - s for _, s, e, _ in raw["kernels"]) + sum(e - s for _, s, e in raw["copies"])
    starts = [r[1] for r in raw["kernels"] + raw["copies"]]
    ends = [r[2] for r in raw["kernels"] + raw["copies"]]
    assert busy["GpuTime"].sum() == gpu
    assert busy["BusyPercent"].iloc[0] == pytest.approx(100.0 * gpu / (max(ends) - min(starts)))


def test_summary_domain_names_a_table_or_fails_naming_the_valid_ones(run_db, cli):
    path, _ = run_db
    rc, out, err = cli("summary", path, "--domain", "kernels")
    assert rc == 1 and out == ""
    line, = err.strip().splitlines()
    assert line.startswith("rocpd: error: --domain kernels: no such table; did you mean kernel?")
    assert "memory_copy" in line and "cuda_runtime_api" in line
    # ROCm's category name reads as its table; a real table of no rows says so
    rc, out, _ = cli("summary", path, "--domain", "KERNEL_DISPATCH")
    assert rc == 0 and "== KERNEL_STATS ==" in out and "MARKER_API_STATS" not in out
    rc, out, _ = cli("summary", path, "--domain", "hip_api")
    assert rc == 0 and "No hip_api records in these databases." in out


def test_csv_export_headers(run_db, tmp_path):
    path, raw = run_db
    from rocpd.export import csv as csv_export
    with rocpd.connect(path) as db:
        written = csv_export.write(db, str(tmp_path / "x"))
    with open(tmp_path / "x_kernel_trace.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["Kind", "Agent_Id", "Queue_Id"] and rows[0][-1] == "Grid_Size_Z"
    assert len(rows) - 1 == len(raw["kernels"])
    with open(tmp_path / "x_marker_api_trace.csv") as fh:
        m = list(csv.DictReader(fh))
    assert sorted(r["Function"] for r in m) == sorted(x[0] for x in raw["markers"])
    assert str(tmp_path / "x_memory_copy_trace.csv") in written


def test_chrome_json_flows(run_db, tmp_path):
    path, raw = run_db
    from rocpd.export import chrome
    with rocpd.connect(path) as db:
        out = chrome.write(db, str(tmp_path / "t.json"))
    ev = json.load(open(out))["traceEvents"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    assert len(kernels) == len(raw["kernels"])
    assert sum(1 for e in ev if e["ph"] == "s") == len(raw["kernels"])
    k0 = min(raw["kernels"], key=lambda r: r[1])
    first = min(kernels, key=lambda e: e["ts"])
    assert first["ts"] == k0[1] / 1000 and first["dur"] == (k0[2] - k0[1]) / 1000


def test_compare_and_merge(tmp_path, make_run):
    a = make_run(tmp_path / "a.db", seed=1, pid=1)
    b = make_run(tmp_path / "b.db", seed=2, pid=2, n_kernels=100)
    res = compare(str(tmp_path / "a.db"), str(tmp_path / "b.db"))
    k = res["kernels"].set_index("Name")
    ta = pd.DataFrame(a["kernels"]).assign(d=lambda x: x[2] - x[1]).groupby(0)["d"].sum()
    tb = pd.DataFrame(b["kernels"]).assign(d=lambda x: x[2] - x[1]).groupby(0)["d"].sum()
    for name in ta.index:
        assert k.loc[name, "DeltaNs"] == tb.get(name, 0) - ta[name]
    assert res["summary"]["kernel_speedup"] == pytest.approx(ta.sum() / tb.sum())
    assert list(res["kernels"]["DeltaNs"].abs()) == sorted(res["kernels"]["DeltaNs"].abs(), reverse=True)
    from rocpd.io.merge import merge_files
    out = merge_files([tmp_path / "a.db", tmp_path / "b.db"], str(tmp_path / "m.db"))
    with rocpd.connect(out) as db:
        assert len(db.parts) == 2
        assert db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 300
        assert db.kernel_stats()["Calls"].sum() == 300


def test_query_cli_formats(run_db):
    path, raw = run_db
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for fmt, check in (("json", lambda s: json.loads(s)[0]["n"] == len(raw["kernels"])),
                       ("csv", lambda s: s.splitlines()[1] == str(len(raw["kernels"]))),
                       ("markdown", lambda s: s.startswith("| n |"))):
        r = subprocess.run([sys.executable, "-m", "rocpd", "query", path, "--sql",
                            "SELECT COUNT(*) AS n FROM kernels", "--format", fmt],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0 and check(r.stdout), (fmt, r.stdout, r.stderr)
