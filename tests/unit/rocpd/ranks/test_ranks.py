"""Cross-rank view (rocpd.ranks, rocpd ranks) over generated multi-rank runs, checked against the
rows themselves; rank detection for torchrun, Slurm and MPI environments."""

import pandas as pd
import pytest

import rocpd
from rocpd import ranks
from rocpd.ranks import plots as rank_plots
from rocpd.ranks import section
from rocpd.testing import ALLREDUCE, DatabaseBuilder, build_ranks


@pytest.fixture(scope="module")
def run16(tmp_path_factory):
    d = tmp_path_factory.mktemp("run16")
    build_ranks(d, ranks=16, steps=6, straggler=11, seed=4)
    return d


def test_straggler_named_with_its_excess(run16):
    with rocpd.connect(run16) as db:
        rep = ranks.analyze(db)
    assert rep.range_name == "step" and rep.range_detected
    assert rep.straggler == 11 and list(rep.per_rank["rank"]) == list(range(16))
    top, second = rep.slowest.iloc[0], rep.slowest.iloc[1]
    assert top["metric"] == "compute per step"
    assert 20 < top["excess_pct"] < 35 and second["excess_pct"] < 3  # GEMMs 1.3x of the compute
    # the others wait for it: it has the least time in collectives
    assert rep.per_rank.set_index("rank")["collective_per_step_ns"].idxmin() == 11
    skew = rep.kernel_skew.set_index("Name")
    assert skew.loc["gemm_bf16_tn_128x128", "MaxRank"] == 11
    assert skew.loc["gemm_bf16_tn_128x128", "MaxOverMedian"] == pytest.approx(1.3, abs=0.03)
    assert skew.loc[ALLREDUCE, "MinRank"] == 11
    assert "agent_results.db" in " ".join(rep.notes)  # the launcher's database is no rank
    assert "rank 11 is the slowest by compute per step" in rep.headline()


def test_step_tables_match_the_rows(run16):
    """Per step: duration of the range; compute and collective kernel time of the kernels that
    start between this step's start and the next's, computed here from the kernels view."""
    with rocpd.connect(run16) as db:
        rep = ranks.analyze(db)
        ranks_of = db.rank_of()
        k = db.kernels()
        r = db.regions(category="MARKER_CORE_API")
    k["rank"] = k["guid"].map(ranks_of)
    r["rank"] = r["guid"].map(ranks_of)
    for rank in (0, 11):
        steps = r[(r["rank"] == rank) & (r["name"] == "step")].sort_values("start")
        got = rep.steps[rep.steps["rank"] == rank].reset_index(drop=True)
        assert list(got["duration_ns"]) == list(steps["end"] - steps["start"])
        starts = list(steps["start"]) + [None]
        kr = k[k["rank"] == rank]
        for i in range(len(steps)):
            inside = kr[(kr["start"] >= starts[i]) & ((kr["start"] < starts[i + 1]) if starts[i + 1]
                                                     else True)]
            coll = inside["name"].str.contains("nccl", case=False)
            assert got.loc[i, "collective_ns"] == inside[coll]["duration"].sum()
            assert got.loc[i, "compute_ns"] == inside[~coll]["duration"].sum()
            assert got.loc[i, "kernels"] == len(inside)
        totals = kr.groupby(kr["name"].str.contains("nccl", case=False))["duration"].sum()
        row = rep.per_rank.set_index("rank").loc[rank]
        assert (row["collective_ns"], row["compute_ns"]) == (totals[True], totals[False])


def test_dask_gives_the_same_report(run16):
    distributed = pytest.importorskip("distributed", reason="dask/distributed not installed")
    with rocpd.connect(run16) as db:
        want = ranks.analyze(db, skip_steps=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as c, \
            distributed.Client(c) as client, rocpd.connect(run16, dask=client) as db:
        got = ranks.analyze(db, skip_steps=1)
    for name in ("steps", "per_rank", "slowest", "kernel_skew", "processes"):
        pd.testing.assert_frame_equal(getattr(want, name), getattr(got, name), obj=name)
    assert got.steps["step"].min() == 1


@pytest.mark.parametrize("var", ["SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK"])
def test_rank_from_each_launcher(tmp_path, var):
    build_ranks(tmp_path, ranks=4, steps=3, straggler=2, rank_var=var, agent=False)
    with rocpd.connect(tmp_path) as db:
        assert sorted(db.rank_of().values()) == [0, 1, 2, 3]
        assert ranks.analyze(db).straggler == 2


def test_rank_without_environment(tmp_path):
    """Other writers record no environment: rocprof.rank metadata, then the file name decide."""
    with DatabaseBuilder(tmp_path / "a.db") as b:
        b.metadata("rocprof.rank", 5)
    DatabaseBuilder(tmp_path / "out_rank7_results.db").close()
    (tmp_path / "rank_3").mkdir()
    DatabaseBuilder(tmp_path / "rank_3" / "12345_results.db").close()
    with DatabaseBuilder(tmp_path / "b.db", environment={"HOME": "/root"}) as b:
        b.metadata("rocprof.rank", 0)  # an old launcher wrote 0 for an unranked process
    DatabaseBuilder(tmp_path / "frank1.db").close()  # "rank" inside a word is no rank
    with rocpd.connect(tmp_path) as db:
        got = {p.split("/")[-1]: r for p, r in
               zip(db.paths, [db.rank_of()[g] for g in (s.guids[0] for s in db.sources())],
                   strict=True)}
    assert got == {"a.db": 5, "out_rank7_results.db": 7, "12345_results.db": 3, "b.db": None,
                   "frank1.db": None}


def test_step_detection(tmp_path):
    """Numbered names are one family; the repeating range nested least deep wins; marks and a
    one-off enclosing range do not."""
    for r in range(2):
        with DatabaseBuilder(tmp_path / f"r{r}.db", rank=r) as b:
            b.marker("train", 0, 10_000_000)
            for i in range(4):
                s = 100_000 + i * 1_000_000
                b.marker(f"rank-{r}-step {i}", s, s + 900_000)
                b.marker("fwd", s + 1000, s + 400_000)
                b.marker("fwd", s + 400_000, s + 800_000)
                b.kernel("gemm", s + 2000, s + 300_000 * (1 + r))
                b.kernel("ncclKernel_AllReduce", s + 600_000, s + 800_000)
    with rocpd.connect(tmp_path) as db:
        rep = ranks.analyze(db)
        assert rep.range_name == "rank-#-step #" and len(rep.steps) == 8
        assert rep.straggler == 1
        assert ranks.analyze(db, "fwd").steps.groupby("rank").size().tolist() == [8, 8]
        assert ranks.analyze(db, "rank-0-step 9").range_name == "rank-#-step #"
        with pytest.raises(rocpd.RocpdError, match="no ROCTx range named 'stp'"):
            ranks.analyze(db, "stp")


def test_even_ranks_name_no_straggler(tmp_path):
    build_ranks(tmp_path, ranks=4, steps=3, straggler=None, agent=False)
    with rocpd.connect(tmp_path) as db:
        rep = ranks.analyze(db)
    assert rep.headline().startswith("no rank stands out: the slowest by compute per step")
    assert rep.slowest["excess_pct"].iloc[0] < 5


def test_no_rank_anywhere_numbers_in_path_order(tmp_path):
    for i in range(3):
        with DatabaseBuilder(tmp_path / f"p{i}.db", pid=10 + i) as b:
            b.kernel("k", 0, 1000 * (i + 1))
    with rocpd.connect(tmp_path) as db:
        rep = ranks.analyze(db)
    assert list(rep.per_rank["rank"]) == [0, 1, 2] and rep.straggler == 2
    assert rep.range_name is None and rep.slowest["metric"].iloc[0] == "compute (whole run)"
    assert any("path order" in n for n in rep.notes)


def test_heatmap_data_and_png(run16):
    with rocpd.connect(run16) as db:
        rep = ranks.analyze(db)
        data = rank_plots.heatmap_data(rep)
        assert data["metric"] == "compute_ns" and data["ranks"] == list(range(16))
        assert len(data["values"]) == 16 and len(data["values"][0]) == 6
        row = data["values"][11]
        assert min(row) > max(max(v) for i, v in enumerate(data["values"]) if i != 11)
        pytest.importorskip("matplotlib")
        html = section.report_section(db)
    assert html.startswith("<h2>Ranks</h2>") and "data:image/png;base64," in html
    assert "rank 11 is the slowest" in rep._repr_html_()


def test_cli(run16, cli, tmp_path):
    pytest.importorskip("matplotlib")
    rc, out, err = cli("ranks", run16, "--plot", tmp_path / "h.png", "--csv", tmp_path / "x",
                       "--top", "3", "--metric", "duration")
    assert rc == 0, err
    assert "rank 11 is the slowest by compute per step" in out and "KERNEL SKEW" in out
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(pd.read_csv(tmp_path / "x_rank_steps.csv")) == 16 * 6
    rc, _, err = cli("ranks", run16, "--range", "nope")
    assert rc == 1 and err.startswith("rocpd: error: no ROCTx range named 'nope'")
    assert len(err.strip().splitlines()) == 1


def test_ranks_without_gpu_work_compare_step_times_and_say_so(tmp_path):
    """CPU-only ranks (steps as ROCTx ranges, no kernels): step times are compared, and the
    compute/collective columns, all zeros, are not printed as figures."""
    for r in range(2):
        with DatabaseBuilder(tmp_path / f"r{r}.db", rank=r) as b:
            for i in range(4):
                s = i * 1_000_000
                b.marker("step", s, s + 500_000 * (1 + r))
    with rocpd.connect(tmp_path) as db:
        rep = ranks.analyze(db)
    assert not rep.gpu_work and rep.straggler == 1
    assert rep.slowest["metric"].iloc[0] == "step time"
    text = rep.format()
    assert "note: no GPU work recorded: the ranks are compared by step time only" in text
    assert "compute" not in text.split("note:")[0] and "collective" not in text.split("note:")[0]
    with rocpd.connect(tmp_path / "r0.db") as db:
        assert ranks.analyze(db).headline() == "one rank (rank 0): step time 0.500 ms"
