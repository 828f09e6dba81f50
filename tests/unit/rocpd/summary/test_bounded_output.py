"""Console output bounded by default: every summary table shows its top rows (per process, rank
or host when grouped) and says how many it leaves out; --all shows them all. The region tables,
combined in SQLite, give the numbers of the pandas path."""

from __future__ import annotations

import pandas as pd
import pytest

import rocpd
from rocpd.io.filters import Filter
from rocpd.summary import core as _summary
from rocpd.summary import stats
from rocpd.summary.sql import region_tables
from rocpd.testing import DatabaseBuilder
from rocpd.textfmt import TOP_ROWS

T = 1_000_000


def many_names(path, n=30, pid=1000, rank=None, seed=0):
    with DatabaseBuilder(path, pid=pid, rank=rank) as b:
        for i in range(n):
            s = T + i * 10_000
            b.marker(f"item {i:03d}", s, s + 100 + (i * 37 + seed) % 1000)
            b.region("HIP_RUNTIME_API", f"hipFunc{i % 3}", s + 10, s + 50 + i)
            b.kernel(f"kernel_{i % 4}", s + 60, s + 160 + (i + seed) % 50)
    return str(path)


@pytest.fixture
def big(tmp_path):
    return many_names(tmp_path / "big.db")


def _section(out, title):
    return out.split(f"== {title} ==\n", 1)[1].split("\n\n", 1)[0].splitlines()


def test_summary_shows_the_top_rows_and_says_how_many_more(cli, big):
    rc, out, _ = cli("summary", big)
    assert rc == 0
    rows = _section(out, "MARKER_API_STATS")
    assert len(rows) == 1 + TOP_ROWS + 1 and rows[-1] == f"… and {30 - TOP_ROWS} more (use --all)"
    assert "… and" not in "\n".join(_section(out, "KERNEL_STATS"))  # 4 rows: all shown


def test_summary_all_and_top(cli, big):
    rc, out, _ = cli("summary", big, "--all")
    assert rc == 0 and "more (use --all)" not in out
    assert len(_section(out, "MARKER_API_STATS")) == 1 + 30
    rc, out, _ = cli("summary", big, "--top", "5")
    assert _section(out, "MARKER_API_STATS")[-1] == "… and 25 more (use --all)"
    assert len(_section(out, "KERNEL_STATS")) == 1 + 4  # 4 names: no line about more


def test_top_is_per_rank(cli, tmp_path):
    """--by rank --top 3 showed rank 0's rows only (the top 3 of the whole table)."""
    for r in (0, 1, 10):
        many_names(tmp_path / f"r{r}.db", pid=100 + r, rank=r, seed=r)
    rc, out, _ = cli("summary", *(tmp_path / f"r{r}.db" for r in (0, 1, 10)), "--by", "rank",
                     "--top", "3")
    assert rc == 0
    for title, left in (("KERNEL_STATS", 3), ("MARKER_API_STATS", 81)):
        rows = _section(out, title)
        ranks = [int(line.split()[0]) for line in rows[1:-1]]
        assert ranks == [0, 0, 0, 1, 1, 1, 10, 10, 10], title  # numeric order, 3 each
        assert rows[-1] == f"… and {left} more (use --all)"


def test_rocm_form_console_is_bounded_too(cli, big):
    rc, out, _ = cli("summary", "-i", big, "--summary-by-rank", "--top", "4")
    assert rc == 0
    markers = out.split("MARKERS_SUMMARY:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(markers) == 1 + 4 + 1 and markers[-1] == "… and 26 more (use --all)"


@pytest.mark.parametrize("by", [None, "pid", "rank", "host"])
def test_region_tables_in_sqlite_equal_the_pandas_path(tmp_path, by):
    paths = [many_names(tmp_path / f"{i}.db", n=40, pid=10 + i, rank=i, seed=i) for i in range(3)]
    with rocpd.connect(*paths) as db:
        cats = _summary.region_categories(db)
        tabs = region_tables(db, Filter(), by, None, {"all": cats})
        ref = _summary.stats(db, "region", by=by)
    got = tabs["all"]
    ref = _summary.finish_percent(ref.drop(columns=["category"]), by)  # as collect() does
    keys = [by, "Name"] if by else ["Name"]
    got = got.sort_values(keys, ignore_index=True)
    ref = ref.sort_values(keys, ignore_index=True)
    assert got.attrs["rows"] == len(ref)
    pd.testing.assert_frame_equal(got, ref[got.columns], check_dtype=False)


def test_region_tables_top_per_group_and_counts(tmp_path):
    paths = [many_names(tmp_path / f"{i}.db", n=12, pid=10 + i, rank=i, seed=i) for i in range(2)]
    with rocpd.connect(*paths) as db:
        tabs = region_tables(db, Filter(), "pid", 2, {"m": ["MARKER_CORE_API"]})
        full = _summary.stats(db, "region", by="pid", categories=["MARKER_CORE_API"])
    got = tabs["m"]
    assert got.attrs["rows"] == len(full) == 24
    assert list(got["pid"]) == [10, 10, 11, 11]
    want = full.groupby("pid").head(2).reset_index(drop=True)
    assert list(got["Name"]) == list(want["Name"])


def test_sums_of_squares_past_int64_fall_back_to_floats_as_the_pandas_path(tmp_path):
    long = 1 << 47  # ~39 hours: two of them overflow the int64 sum of squared parts
    with DatabaseBuilder(tmp_path / "long.db") as b:
        for i in range(3):
            b.marker("epoch", T + i * (long + 10), T + i * (long + 10) + long + i)
        b.marker("short", T, T + 5)
    with rocpd.connect(tmp_path / "long.db") as db:
        got = region_tables(db, Filter(), None, None, {"m": ["MARKER_CORE_API"]})["m"]
        ref = _summary.stats(db, "region").drop(columns=["category"])
    assert list(got["Name"]) == list(ref["Name"]) == ["epoch", "short"]
    assert got["StdDev"].iloc[0] == pytest.approx(ref["StdDev"].iloc[0], rel=1e-9)


def test_python_summary_object_keeps_whole_tables(big):
    with rocpd.connect(big) as db:
        s = stats.summarize(db, top=3)
    assert len(s["marker_api"]) == 30 and "… and 27 more (use --all)" in str(s)


def test_run_summary_is_bounded(tmp_path):
    """rocprof run -S on a program with 300 distinct range names prints the top rows of them,
    naming the rocpd command that shows the rest."""
    from tests.support import run_rocprof

    script = tmp_path / "names.py"
    script.write_text("import roctx\nfor i in range(300):\n    with roctx.range(f'r{i:04d}'):\n"
                      "        pass\n")
    r = run_rocprof("run", "-d", tmp_path, "-o", "n", "-S", script)
    assert r.returncode == 0, r.stderr
    rows = _section(r.stdout, "MARKER_API_STATS")
    db = tmp_path / "n_results.db"
    assert len(rows) == 1 + TOP_ROWS + 1
    assert rows[-1] == f"… and {300 - TOP_ROWS} more (use rocpd summary --all {db})"


@pytest.fixture
def megabyte_names(tmp_path):
    """Three ROCTx ranges of 1 MB messages, a kernel launched inside each."""
    path = tmp_path / "mb.db"
    with DatabaseBuilder(path) as b:
        for i in range(3):
            s = T + i * 100_000
            msg = f"{i:03d}" + "x" * (1 << 20)
            b.marker(msg, s, s + 90_000)
            corr = b.next_correlation()
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", s + 10, s + 20, correlation_id=corr)
            b.kernel("gemm", s + 30, s + 80_000, correlation_id=corr, region=msg)
    return str(path)


def test_report_shows_a_1mb_name_truncated_with_its_length(cli, megabyte_names, tmp_path):
    import re

    out = tmp_path / "r.html"
    rc, _, err = cli("report", megabyte_names, "-o", out, "--no-perfetto")
    assert rc == 0, err
    page = out.read_text()
    assert len(page) < 5_500_000  # plotly.js is 4.5 MB of it; the names whole added 3 MB more
    assert not re.search("x{300}", page)
    assert "(1,048,579 characters)" in page
    rc, _, _ = cli("report", megabyte_names, "-o", tmp_path / "r.md", "--no-perfetto")
    md = (tmp_path / "r.md").read_text()
    assert rc == 0 and not re.search("x{300}", md) and "(1,048,579 characters)" in md


@pytest.mark.parametrize("command", [["analyze"], ["ranks"], ["summary"], ["summary", "--all"],
                                     ["compare"]])
def test_console_lines_stay_short_with_a_1mb_name(cli, megabyte_names, command):
    args = [*command, megabyte_names] + ([megabyte_names] if command == ["compare"] else [])
    rc, out, err = cli(*args)
    assert rc == 0, err
    assert max(len(line) for line in out.splitlines()) < 400


def test_report_timeline_lists_the_first_steps_and_says_how_many_more(cli, tmp_path, monkeypatch):
    from rocpd.report import timeline
    from tests.unit.rocpd.analysis_patterns import launch_bound

    launch_bound(tmp_path / "lb.db", steps=6)
    monkeypatch.setattr(timeline, "MAX_STEPS", 4)
    rc, _, err = cli("report", tmp_path / "lb.db", "-o", tmp_path / "r.html", "--no-perfetto")
    assert rc == 0, err
    page = (tmp_path / "r.html").read_text()
    data = page.split("<script type='application/json' id='tl-data'>", 1)[1].split("</script>")[0]
    import json

    tl = json.loads(data.replace("<\\/", "</"))
    assert len(tl["steps"]) == 4 and tl["steps_left_out"] == 2
    assert "The first 4 steps are listed; 2 more are not." in page


def test_run_summary_findings_without_gpu_work_load_no_flood_of_ranges(big, tmp_path, monkeypatch):
    """-S's findings on a run with no GPU op: its phases from the ranges, unless there are more
    ranges than CPU_RANGES_MAX (then the caveats alone, without loading every range)."""
    from rocpd import analysis
    from rocpd.analysis import top as findings

    cpu_only = tmp_path / "cpu.db"
    with DatabaseBuilder(cpu_only) as b:
        for i in range(50):
            name = "r" + "".join(chr(97 + int(d)) for d in str(i))  # no number: 50 names
            b.marker(name, T + i * 100, T + i * 100 + 50 + i)
    with rocpd.connect(cpu_only) as db:
        full = [f.text() for f in analysis.analyze(db).findings()]
    shown = findings.top_text([str(cpu_only)])
    assert "no GPU work was recorded" in full[0] and full[0] in shown
    assert "slowest phase: ROCTx range 'rej'" in shown  # r49, the longest

    def refuse(*a, **k):
        raise AssertionError("the whole analysis ran")

    monkeypatch.setattr(analysis, "analyze", refuse)
    monkeypatch.setattr(findings, "CPU_RANGES_MAX", 49)
    capped = findings.top_text([str(cpu_only)])
    assert "no GPU work was recorded: nothing to break down" in capped
    assert "more than 49 ROCTx ranges and no GPU work" in capped
    assert "analysis failed: AssertionError" in findings.top_text([big])  # GPU work: analysed
