"""Two hosts whose processes have the same pid are two ranks. ROCm's per-rank SQL groups each
database apart but then joins processes on the pid alone, so each of its rows appears once per
host of that pid, one of them under the right hostname; ours keeps exactly the right ones."""

from __future__ import annotations

import os

import pytest
from tables import cell, read_csv

import rocpd
from rocpd import ranks
from rocpd.cli import main as our_rocpd
from rocpd.testing import DatabaseBuilder

HOSTS = ("alpha", "beta")


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> list[str]:
    """pid 77 on each host; beta's kernels and steps last twice as long."""
    out = []
    for i, host in enumerate(HOSTS):
        path = tmp_path_factory.mktemp(host) / "77_results.db"
        with DatabaseBuilder(path, pid=77, hostname=host) as b:
            t = 1_000_000
            for s in range(4):
                b.marker("step", t + s * 100_000, t + s * 100_000 + 40_000 * (i + 1))
                b.kernel("gemm", t + s * 100_000 + 10, t + s * 100_000 + 20_000 * (i + 1))
        out.append(str(path))
    return out


def _summaries(rocm, pair, tmp_path) -> tuple[dict, dict]:
    args = ("summary", "-i", *pair, "--domain-summary", "--summary-by-rank", "--format", "csv",
            "-d")
    rocm.cli(*args, tmp_path / "rocm", cwd=tmp_path)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert our_rocpd([*args, str(tmp_path / "ours")]) == 0
    finally:
        os.chdir(old)
    read = lambda d: {n: read_csv(d / n) for n in os.listdir(d)}  # noqa: E731
    return read(tmp_path / "ours"), read(tmp_path / "rocm")


def _rows(table) -> list[tuple]:
    return sorted(tuple(cell(c) for c in r) for r in table[1])


def test_summary_by_rank_keys_node_and_pid(rocm, pair, tmp_path):
    ours, theirs = _summaries(rocm, pair, tmp_path)
    assert sorted(ours) == sorted(theirs)
    for name in ("kernels_summary_by_rank.csv", "markers_summary_by_rank.csv"):
        header, mine, rocm_rows = ours[name][0], _rows(ours[name]), _rows(theirs[name])
        assert header == theirs[name][0]
        h = header.index("Hostname")
        assert sorted(r[h] for r in mine) == list(HOSTS), name  # one rank per host
        assert set(mine) <= set(rocm_rows), name  # each a row of ROCm's
        # and every figure ROCm has
        assert {r[:h] + r[h + 1:] for r in mine} == {r[:h] + r[h + 1:] for r in rocm_rows}, name
        durations = {r[h]: r[header.index("DURATION (nsec)")] for r in mine}
        assert durations["beta"] > durations["alpha"]
    for name in ("kernels_summary.csv", "markers_summary.csv", "domain_summary.csv"):
        assert _rows(ours[name]) == _rows(theirs[name]), name
    # The domain table per rank: each host's own totals, adding up to the whole run's.
    header, dom = ours["domain_summary_by_rank.csv"][0], _rows(ours["domain_summary_by_rank.csv"])
    h, n, d = header.index("Hostname"), header.index("Calls"), header.index("DURATION (nsec)")
    assert sorted((r[h], r[header.index("Name")]) for r in dom) == \
        [(host, dom_name) for host in HOSTS for dom_name in ("KERNELS", "MARKERS")]
    whole = {r[0]: (r[1], r[2]) for r in _rows(theirs["domain_summary.csv"])}
    for domain in ("KERNELS", "MARKERS"):
        mine = [r for r in dom if r[header.index("Name")] == domain]
        assert (sum(r[n] for r in mine), sum(r[d] for r in mine)) == whole[domain]


def test_ranks_are_one_per_host(pair):
    with rocpd.connect(*pair) as db:
        rep = ranks.analyze(db)
    assert sorted(rep.per_rank["host"]) == list(HOSTS)
    assert list(rep.per_rank["pid"]) == ["77", "77"]
