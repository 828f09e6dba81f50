"""Wrong answers of the command line, each fixed: compare's "speed-up nanx", analyze --units
leaving timestamps in ns and showing rank None, ranks ordered as text (0, 10, 11, 2)."""

from __future__ import annotations

import re

import pytest

from rocpd.testing import DatabaseBuilder, build_ranks


@pytest.fixture
def no_kernels(tmp_path):
    path = tmp_path / "hostonly.db"
    with DatabaseBuilder(path) as b:
        b.marker("x", 1000, 5000)
    return str(path)


def test_compare_never_prints_nan(cli, run_db, no_kernels):
    rc, out, _ = cli("compare", run_db[0], no_kernels)
    assert rc == 0
    assert "nan" not in out.lower()
    assert "speed-up n/a (B has none)" in out.splitlines()[0]
    rc, out, _ = cli("compare", no_kernels, no_kernels)
    assert "speed-up n/a (neither run has any)" in out and "nan" not in out.lower()


def test_compare_api_gives_none_not_nan(run_db, no_kernels):
    from rocpd.diff.compare import compare

    s = compare(run_db[0], no_kernels)["summary"]
    assert s["kernel_speedup"] is None and s["wall_speedup"] > 0


def test_analyze_units_apply_to_the_step_times_and_no_rank_is_a_dash(cli, tmp_path):
    from tests.unit.rocpd.analysis_patterns import launch_bound

    path = tmp_path / "lb.db"
    launch_bound(path)
    rc, out, _ = cli("analyze", path, "--units", "ms", "--section", "steps", "--section", "per-step")
    assert rc == 0
    steps = out.split("== STEPS ==\n", 1)[1].split("\n\n", 1)[0].splitlines()
    head = steps[0].split()
    assert "StartMs" in head and "EndMs" in head and "start" not in head
    vals = steps[1].split()
    first = dict(zip(head, [" ".join(vals[:2]), *vals[2:]], strict=True))  # process "pid 1000"
    assert first["rank"] == "-" and float(first["StartMs"]) == 0.0 and float(first["EndMs"]) < 1.0
    per_step = out.split("== PER-STEP BREAKDOWN ==\n", 1)[1].splitlines()[0].split()
    assert {"HostStartMs", "HostEndMs", "StartMs", "EndMs"} <= set(per_step)
    assert "None" not in out and not re.search(r"\b1000\d{6}\b", out)  # no raw ns timestamps


@pytest.fixture(scope="module")
def twelve(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks") / "R"
    build_ranks(str(folder), ranks=12, straggler=11, steps=3)
    return str(folder)


def _ranks_of(out, title):
    table = out.split(f"== {title} ==\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return [int(line.split()[2]) for line in table]  # "rank", N, N ...


def test_analyze_orders_ranks_as_numbers(cli, twelve):
    rc, out, _ = cli("analyze", twelve, "--section", "temporal", "--section", "idle", "--all")
    assert rc == 0
    assert _ranks_of(out, "TEMPORAL BREAKDOWN (WHOLE RUN, FROM EACH GPU'S FIRST ACTIVITY)") == \
        list(range(12))
    assert _ranks_of(out, "IDLE BREAKDOWN (WHOLE RUN)") == list(range(12))


def test_report_orders_ranks_as_numbers(cli, twelve, tmp_path):
    rc, _, err = cli("report", twelve, "-o", tmp_path / "r.html", "--no-perfetto")
    assert rc == 0, err
    page = (tmp_path / "r.html").read_text()
    seen = [int(m) for m in re.findall(r"rank (\d+) (?:·|\\u00b7) pid", page)]  # timeline groups
    assert seen and seen == sorted(seen) and seen[:3] == [0, 1, 2]
