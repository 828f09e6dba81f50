"""Two hosts whose processes have the same pid are two ranks. ROCm's per-rank SQL groups each
database apart but then joins processes on the pid alone, so each of its rows appears once per
host of that pid, one of them under the right hostname; ours keeps exactly the right ones. The
pair read together gives ROCm's rows in every view and CSV, and its sampled metrics stay apart
per host."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from tables import assert_same_table, cell, read_csv

import rocpd
from rocpd import ranks
from rocpd.cli import main as our_rocpd
from rocpd.device_metrics import plots as metric_plots
from rocpd.device_metrics import samples as metrics
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
        _sampled_rss(path, [(t + k * 100_000, (i + 1) * 1000.0 + k) for k in range(3)])
        out.append(str(path))
    return out


def _sampled_rss(path, values) -> None:
    """process_rss sampled as --process-freq stores it (a pmc row, a track naming no thread, per
    value a sample and its pmc_event), added to a database the fixture writer made."""
    con = sqlite3.connect(path)
    sfx = con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'uuid'").fetchone()[0]

    def ins(table, **kv):
        return con.execute(f"INSERT INTO rocpd_{table}{sfx} ({', '.join(kv)}) VALUES"
                           f" ({', '.join('?' * len(kv))})", list(kv.values())).lastrowid

    name, cat = ins("string", string="process_rss"), ins("string", string="process")
    pmc = ins("info_pmc", nid=1, pid=77, agent_id=1, target_arch="CPU", name="process_rss",
              symbol="process_rss", description="resident set", units="bytes", value_type="ABS",
              is_constant=0, is_derived=0, extdata="{}")
    track = ins("track", nid=1, pid=77, tid=None, name_id=name, extdata="{}")
    for ts, v in values:
        ev = ins("event", category_id=cat, stack_id=0, parent_stack_id=0, correlation_id=0,
                 extdata="{}")
        ins("sample", track_id=track, timestamp=ts, event_id=ev)
        ins("pmc_event", event_id=ev, pmc_id=pmc, value=v)
    con.commit()
    con.close()


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


def test_metrics_summary_keeps_each_host(pair):
    with rocpd.connect(*pair) as db:
        table = metrics.summary(db)
        text = metrics.format_summary(db)
        fig = metric_plots.metrics_over_time(db)
    assert sorted(line.get_label() for ax in fig.axes for line in ax.get_lines()) == \
        ["process_rss (alpha, pid 77)", "process_rss (beta, pid 77)"]
    assert list(table[["Host", "Metric", "Samples"]].itertuples(index=False, name=None)) == \
        [("alpha", "process_rss", 3), ("beta", "process_rss", 3)]
    assert list(table["Max"]) == [1002.0, 2002.0]
    assert "alpha" in text and "beta" in text


_VIEW_ROWS = """
import sys
import rocm_rocpd
data = rocm_rocpd.connect(sys.argv[1:3])
result = {}
for v in sys.argv[3:]:
    cur = data.execute(f"SELECT * FROM {v}")
    result[v] = [[d[0] for d in cur.description], [list(r) for r in cur.fetchall()]]
"""
# Not threads: ROCm's joins a thread's process on the pid and the node's guid, so over two
# databases of one pid each thread appears once per database.
VIEWS = ["regions", "samples", "regions_and_samples", "kernels", "processes", "top_kernels",
         "top"]


def test_pair_views_and_csv_as_rocm(rocm, pair, tmp_path):
    theirs = rocm.python(_VIEW_ROWS, *pair, *VIEWS)
    with rocpd.connect(*pair) as db:
        for view in VIEWS:
            cols, rows = theirs[view]
            mine = [r[:len(cols)] for r in db.execute(f"SELECT * FROM {view}").fetchall()]
            assert sorted(map(json.dumps, map(list, mine))) == sorted(map(json.dumps, rows)), view
        assert db.execute("SELECT count(*) FROM samples").fetchone()[0] == 0  # metrics apart
        assert db.execute("SELECT count(*) FROM metric_samples").fetchone()[0] == 6
    rocm.cli("convert", "-i", *pair, "-f", "csv", "-d", tmp_path / "rocm", "-o", "out",
             cwd=tmp_path)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert our_rocpd(["convert", "-i", *pair, "-f", "csv", "-d", str(tmp_path / "ours"), "-o",
                          "out"]) == 0
    finally:
        os.chdir(old)
    for name in os.listdir(tmp_path / "rocm"):
        if name != "out_agent_info.csv":  # ROCm reads it from agent JSON our writer keeps not
            assert_same_table(read_csv(tmp_path / "ours" / name),
                              read_csv(tmp_path / "rocm" / name), name)
