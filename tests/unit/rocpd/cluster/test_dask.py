"""The Dask backend (rocpd.cluster) gives the local path's numbers exactly: the same summaries,
time windows and filters over the same databases, on a real LocalCluster of worker processes."""

import os

import pandas as pd
import pytest

import rocpd
from rocpd.summary import fastagg, stats
from rocpd.summary import rocm as rocm_summary

distributed = pytest.importorskip("distributed", reason="dask/distributed not installed (dev extra)")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, make_run):
    d = tmp_path_factory.mktemp("ranks")
    paths = []
    for i in range(3):
        p = d / f"rank{i}.db"
        make_run(p, seed=10 + i, pid=200 + i, rank=i, n_kernels=150 + 40 * i, drops=i)
        paths.append(str(p))
    return paths


def _same_tables(a: dict, b: dict):
    assert list(a) == list(b)
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k], check_exact=True, obj=k)


FILTERS = [
    {},
    {"pct": (10.0, 60.0)},
    {"window": (0, 150_000)},
    {"between": ("step", "step")},
    {"start": "25%", "end": "75%", "inclusive": False},
    {"include": "gemm|soft", "exclude": "soft"},
    {"pid": [200, 202]},
    {"rank": 1},
]


@pytest.mark.parametrize("flt", FILTERS, ids=[",".join(f) or "none" for f in FILTERS])
@pytest.mark.parametrize("by", [None, "rank"])
def test_summaries_equal_local(client, ranks, flt, by):
    with rocpd.connect(*ranks) as local:
        want = stats.collect(local, by=by, **flt)
        want_busy = local.busy(**flt)
    with rocpd.connect(*ranks, dask=client) as db:
        got = stats.collect(db, by=by, **flt)
        got_busy = db.busy(**flt)
    assert "kernel" in want or flt.get("rank") is not None or "include" in flt
    _same_tables(want, got)
    pd.testing.assert_frame_equal(want_busy, got_busy, check_exact=True)


def test_marker_window_on_one_file(client, ranks):
    with rocpd.connect(ranks[1]) as local, rocpd.connect(ranks[1], dask=client) as db:
        _same_tables(stats.collect(local, start_marker="train", end="50%"),
                     stats.collect(db, start_marker="train", end="50%"))


def test_rocm_tables_and_frames_equal_local(client, ranks):
    with rocpd.connect(*ranks) as local, rocpd.connect(*ranks, dask=client) as db:
        _same_tables(rocm_summary.tables(local, True, True), rocm_summary.tables(db, True, True))
        for name in ("kernels", "regions", "memory_copies", "processes"):
            pd.testing.assert_frame_equal(getattr(local, name)(), getattr(db, name)(), obj=name)
        assert local.rank_of() == db.rank_of() and sorted(db.rank_of().values()) == [0, 1, 2]
        assert stats.format_drops(local) == stats.format_drops(db)
        assert db.dropped_total() == 0 + 1 + 2


def test_rowid_ranges_as_tasks(client, ranks, monkeypatch):
    """Many small rowid-range tasks on the workers, the local path in its own split: one result."""
    with rocpd.connect(*ranks) as local:
        want = local.kernel_stats(by="pid")
    monkeypatch.setattr(fastagg, "_CHUNK_MIN", 23)
    monkeypatch.setattr(fastagg, "_CHUNK_MAX", 23)
    seen = []
    with rocpd.connect(*ranks, dask=client) as db:
        orig = db.run_tasks
        def spy(func, jobs, label, **kw):
            if label == "kernel summary":
                seen.append(len(jobs))
            return orig(func, jobs, label, **kw)
        db.run_tasks = spy
        got = db.kernel_stats(by="pid")
    assert seen == [sum(-(-n // 23) for n in (150, 190, 230))]
    pd.testing.assert_frame_equal(want, got, check_exact=True)


def test_unreadable_file_is_skipped_with_a_warning(client, ranks, tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_text("not sqlite")
    with rocpd.connect(*ranks, str(bad), dask=client) as db:
        assert db.paths == ranks and db.skipped[0][0] == str(bad)
        assert int(db.kernel_stats()["Calls"].sum()) == 150 + 190 + 230
    assert "bad.db" in capsys.readouterr().err
    with pytest.raises(rocpd.RocpdError, match="bad.db"):
        rocpd.connect(*ranks, str(bad), dask=client, strict=True)


def test_path_only_workers_see(client, ranks, tmp_path):
    """A path the client does not see goes to the workers, which say on which host it is missing."""
    ghost = str(tmp_path / "elsewhere" / "rank9.db")
    with pytest.raises(rocpd.RocpdError, match="no such file on Dask worker host"):
        rocpd.connect(ghost, dask=client)
    with rocpd.connect(ranks[0], ghost, dask=client) as db:
        assert db.paths == [ranks[0]]


def test_cli_dask_matches_local(client, ranks, cli, monkeypatch):
    rc, local, _ = cli("summary", *ranks, "--by", "rank", "--busy", "--pct", "0", "80")
    assert rc == 0
    rc, remote, err = cli("summary", *ranks, "--by", "rank", "--busy", "--pct", "0", "80",
                          "--scheduler", client.scheduler.address)
    assert rc == 0 and remote == local and "dask: scheduler" in err
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", client.scheduler.address)
    rc, remote, err = cli("summary", *ranks, "--dask", "--domain-summary", "-f", "csv", "-d",
                          str(os.path.dirname(ranks[0]) + "/out"))
    assert rc == 0 and f"scheduler {client.scheduler.address}" in err
    assert os.path.exists(os.path.dirname(ranks[0]) + "/out/kernels_summary.csv")


def test_cli_local_cluster(ranks, cli):
    rc, local, _ = cli("summary", *ranks)
    monkeypatch_env = os.environ.pop("DASK_SCHEDULER_ADDRESS", None)
    try:
        rc2, remote, err = cli("summary", *ranks, "--dask", "--dask-workers", "1")
    finally:
        if monkeypatch_env is not None:
            os.environ["DASK_SCHEDULER_ADDRESS"] = monkeypatch_env
    assert (rc, rc2) == (0, 0) and remote == local and "local cluster of 1 worker" in err


def test_cli_errors_are_one_line(ranks, cli, monkeypatch):
    import sys

    rc, _, err = cli("summary", *ranks, "--dask-workers", "2")
    assert rc == 1 and err.strip() == "rocpd: error: --dask-workers needs --dask"
    rc, _, err = cli("summary", *ranks, "--scheduler", "tcp://127.0.0.1:1", "--dask-workers", "2")
    assert rc == 1 and "--dask-workers sizes a local cluster" in err
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    rc, _, err = cli("summary", *ranks, "--dask")
    assert rc == 1 and len(err.strip().splitlines()) == 1
    assert "needs dask and distributed" in err and "rocprof[dask]" in err


def test_console_script_without_main_guard(ranks, tmp_path):
    """The Makefile's launcher calls main() at import: spawned local-cluster workers must not run
    it again."""
    import subprocess
    import sys

    script = tmp_path / "rocpd"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom rocpd.cli import main\nsys.exit(main())\n")
    env = {k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"}
    r = subprocess.run([sys.executable, str(script), "summary", *ranks, "--dask", "--dask-workers",
                        "1", "--top", "1"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "KERNEL_STATS" in r.stdout and "bootstrapping phase" not in r.stderr
