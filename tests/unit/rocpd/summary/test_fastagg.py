"""The numpy kernel summary (rocpd.summary.fastagg) against the SQL path and an independent computation,
including the pooled path over several rowid ranges and several files."""

import os
import statistics
import subprocess
import sys
import textwrap

import pytest
from support import ROOT

import rocpd
from rocpd.io.filters import Filter
from rocpd.summary import core as summary
from rocpd.summary import fastagg


def _expected(rows):
    by = {}
    for name, s, e, *_ in rows:
        by.setdefault(name, []).append(e - s)
    return {n: (len(v), sum(v), min(v), max(v), statistics.stdev(v) if len(v) > 1 else 0.0)
            for n, v in by.items()}


def _check(df, rows):
    exp = _expected(rows)
    assert set(df["Name"]) == set(exp)
    for _, r in df.iterrows():
        n, tot, mn, mx, sd = exp[r["Name"]]
        assert (r["Calls"], r["TotalDurationNs"], r["MinNs"], r["MaxNs"]) == (n, tot, mn, mx)
        assert r["StdDev"] == pytest.approx(sd, rel=1e-9, abs=1e-6)


def _sql_path(db, **filters):
    """The same summary through SQLite's GROUP BY (fast path switched off)."""
    orig = fastagg.kernel_partials
    fastagg.kernel_partials = lambda *a, **k: None
    try:
        return summary.stats(db, "kernel", **filters)
    finally:
        fastagg.kernel_partials = orig


@pytest.fixture
def forced_pool(monkeypatch):
    monkeypatch.setattr(fastagg, "_MIN_PARALLEL_ROWS", 0)
    monkeypatch.setattr(fastagg, "_CHUNK_MIN", 37)
    monkeypatch.setattr(fastagg, "_CHUNK_MAX", 37)


def test_pool_over_ranges_and_files_matches_raw_and_sql(tmp_path, make_run, forced_pool):
    raws = [make_run(tmp_path / f"r{i}.db", seed=i, pid=100 + i, rank=i, n_kernels=300) for i in range(3)]
    paths = [str(tmp_path / f"r{i}.db") for i in range(3)]
    rows = [r for raw in raws for r in raw["kernels"]]
    with rocpd.connect(*paths) as db:
        tasks, _, total = fastagg.plan(db, "1", [], False, 2)
        assert total == 900 and len(tasks) == 3 * 9  # 300 rows in ranges of 37
        fast = db.kernel_stats()
        _check(fast, rows)
        slow = _sql_path(db)
        assert fast[["Name", "Calls", "TotalDurationNs", "MinNs", "MaxNs"]].equals(
            slow[["Name", "Calls", "TotalDurationNs", "MinNs", "MaxNs"]])
        by_pid = db.kernel_stats(by="pid")
        assert sorted(by_pid["pid"].unique()) == [100, 101, 102]
        for i, raw in enumerate(raws):
            _check(by_pid[by_pid["pid"] == 100 + i], raw["kernels"])
        by_rank = db.kernel_stats(by="rank")
        _check(by_rank[by_rank["rank"] == 2], raws[2]["kernels"])


def test_filters_on_fast_path(tmp_path, make_run, forced_pool):
    raw = make_run(tmp_path / "a.db", n_kernels=250)
    with rocpd.connect(str(tmp_path / "a.db")) as db:
        t0, t1 = db.run_bounds()
        mid = t0 + (t1 - t0) // 2
        _check(db.kernel_stats(pct=(0, 50)), [r for r in raw["kernels"] if r[1] < mid])
        _check(db.kernel_stats(include="gemm|relu", exclude="relu"),
               [r for r in raw["kernels"] if r[0] == "gemm_fp16"])
        assert db.kernel_stats(pid=999).empty


def test_aggregate_sparse_and_two_keys():
    np = pytest.importorskip("numpy")
    k = np.array([5, 1 << 50, 5, 7, 1 << 50], np.int64)  # sparse ids take the np.unique route
    pid = np.array([1, 1, 2, 1, 1], np.int64)
    d = np.array([10, 20, 30, 40, 60], np.int64)
    cols, n, s, mn, mx, ss = fastagg.aggregate([k, pid], d)
    got = {(a, b): (c, t, lo, hi, q) for a, b, c, t, lo, hi, q in
           zip(cols[0].tolist(), cols[1].tolist(), n.tolist(), s.tolist(), mn.tolist(), mx.tolist(),
               ss, strict=True)}
    assert got == {(5, 1): (1, 10, 10, 10, 100), (5, 2): (1, 30, 30, 30, 900),
                   (7, 1): (1, 40, 40, 40, 1600), (1 << 50, 1): (2, 80, 20, 60, 4000)}
    assert all(type(q) is int for q in ss)  # exact, not float


@pytest.mark.parametrize("big", [False, True])
def test_sum_of_squares_is_exact(big):
    """Past 2^53 a float sum of squares loses the low digits; the partials keep every one, also on
    the path for durations over 2^37 ns (where the int64 parts could overflow)."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    base = (1 << 40) if big else 100_000_000
    d = (base + rng.integers(-1000, 1000, size=5000)).astype(np.int64)
    d[::7] = -d[::7] // 3  # negative durations (end before start in a broken file) too
    k = np.zeros(len(d), np.int64)
    _, n, s, _, _, ss = fastagg.aggregate([k], d)
    vals = d.tolist()
    assert ss == [sum(v * v for v in vals)] and s.tolist() == [sum(vals)]
    exact = summary.std_dev(n[0], s[0], ss[0])
    assert exact == pytest.approx(statistics.stdev(vals), rel=1e-12)


def test_unreadable_column_falls_back(tmp_path, make_run, monkeypatch):
    raw = make_run(tmp_path / "a.db")
    with rocpd.connect(str(tmp_path / "a.db")) as db:
        assert fastagg.kernel_partials(db, "1", []) is not None
        monkeypatch.setattr(fastagg, "_parse", lambda *a: (_ for _ in ()).throw(fastagg._Unreadable()))
        assert fastagg.kernel_partials(db, "1", []) is None
        _check(db.kernel_stats(), raw["kernels"])  # SQL path answers instead
    assert Filter.of({}).include is None


def test_a_script_without_a_main_guard_runs_once(tmp_path, make_run):
    """The ranges are read on threads: a script (or notebook) summarising a database at its top
    level, with other threads alive, is not imported again by worker processes."""
    raw = make_run(tmp_path / "a.db", n_kernels=300)
    ran = tmp_path / "ran.txt"
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(f"""
        import threading, time
        import rocpd
        from rocpd.summary import fastagg
        with open({str(ran)!r}, "a") as f:
            f.write("ran\\n")
        threading.Thread(target=time.sleep, args=(2,), daemon=True).start()
        fastagg._MIN_PARALLEL_ROWS, fastagg._CHUNK_MIN, fastagg._CHUNK_MAX = 0, 37, 37
        with rocpd.connect({str(tmp_path / "a.db")!r}) as db:
            print(int(db.kernel_stats()["Calls"].sum()))
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(len(raw["kernels"]))]
    assert ran.read_text() == "ran\n"


def test_summary_reads_kernel_partials_once_per_summary(tmp_path, make_run, monkeypatch):
    from rocpd.summary import stats

    make_run(tmp_path / "a.db")
    calls = []
    orig = fastagg.kernel_partials
    monkeypatch.setattr(fastagg, "kernel_partials", lambda *a, **k: calls.append(1) or orig(*a, **k))
    with rocpd.connect(str(tmp_path / "a.db")) as db:
        tables = stats.collect(db)
        assert "kernel" in tables and "domain" in tables and len(calls) == 1
        db.kernel_stats()
        db.kernel_stats()
        assert len(calls) == 3  # outside a summary nothing is kept: a live database is re-read


def test_a_time_window_applied_to_the_views_is_kept(tmp_path, make_run, forced_pool):
    """The ranged readers read the real tables: on a connection whose views were narrowed to
    a window (rocpd.io.time_window.apply_time_window) the summaries read the views instead."""
    from rocpd.io.time_window import apply_time_window, narrowed

    raw = make_run(tmp_path / "a.db", n_kernels=300)
    with rocpd.connect(str(tmp_path / "a.db")) as db:
        t0, t1 = db.run_bounds()
        assert not narrowed(db.conn)
        apply_time_window(db, start="25%", end="75%")
        (src,) = db.sources()
        assert narrowed(db.conn) and narrowed(src.conn)
        lo, hi = db.execute("SELECT min(start), max(\"end\") FROM rocpd_kernel_dispatch").fetchone()
        assert fastagg.kernel_partials(db, "1", []) is None  # the SQL path answers
        _check(db.kernel_stats(), [r for r in raw["kernels"] if r[1] >= lo and r[2] <= hi])
        assert db.kernel_stats()["Calls"].sum() < len(raw["kernels"])
        assert db.busy()["GpuTime"].sum() > 0


@pytest.mark.parametrize("form", [[], ["-i"], ["--by", "pid"]])
def test_the_command_reads_each_range_once_with_its_read_started_early(
        tmp_path, make_run, forced_pool, monkeypatch, capsys, form):
    """`rocpd summary` starts the kernel ranges before its imports; the tables take those results
    (no range read more often than without it, nothing left waiting) and print what a summary
    without it prints."""
    from rocpd.cli import main

    make_run(tmp_path / "a.db", n_kernels=300)
    path = str(tmp_path / "a.db")
    reads, started = [], []
    orig_task, orig_prefetch = fastagg.run_task, fastagg.prefetch
    monkeypatch.setattr(fastagg, "run_task", lambda task: reads.append(task[2:4]) or orig_task(task))
    monkeypatch.setattr(fastagg, "prefetch", lambda *a, **k: started.append(1) or orig_prefetch(*a, **k))
    assert main(["summary", *form, path]) == 0
    early, early_reads = capsys.readouterr().out, len(reads)
    assert started and not fastagg._ahead
    # The default one reads the 300 rows in ranges of 37 once; --by pid twice (per process,
    # then for the domain table).
    assert early_reads == (18 if "--by" in form else 9)
    monkeypatch.setattr(fastagg, "prefetch", lambda *a, **k: None)
    reads.clear()
    assert main(["summary", *form, path]) == 0
    assert capsys.readouterr().out == early and len(reads) == early_reads
