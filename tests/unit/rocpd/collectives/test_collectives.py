"""Collective calls in the database (rocpd.collectives): the rows ROCm uses for RCCL API calls,
bus bandwidth by nccl-tests' formulas, the summary/ranks sections, the slow-collective finding,
clock offsets recovered between hosts with planted skews, queue length per stream."""

from __future__ import annotations

import sqlite3

import pytest
from collective_ranks import KERNEL, SIZES, build_multihost

import rocpd
from rocpd import collectives
from rocpd.collectives import bus_factor, size_bucket
from rocpd.testing import DatabaseBuilder

LATENCY = 20_000
SKEWS = [0, 3_700_123, -12_345_678]


@pytest.fixture(scope="module")
def multihost(tmp_path_factory):
    return build_multihost(tmp_path_factory.mktemp("hosts"), SKEWS, latency_ns=LATENCY)


def test_rows_as_rocm_stores_rccl_calls(multihost):
    """rocpd_region + rocpd_event of category RCCL_API, named by the API function, the arguments
    in rocpd_arg (position, type, name, value)."""
    con = sqlite3.connect(f"file:{multihost[0]}?mode=ro", uri=True)
    cat = con.execute("SELECT DISTINCT C.string, S.string FROM rocpd_region R"
                      " JOIN rocpd_event E ON E.id = R.event_id JOIN rocpd_string C ON C.id = "
                      "E.category_id JOIN rocpd_string S ON S.id = R.name_id").fetchall()
    assert ("RCCL_API", "ncclAllReduce") in cat
    args = con.execute("SELECT A.position, A.type, A.name, A.value FROM rocpd_arg A WHERE "
                       "A.event_id = (SELECT MIN(event_id) FROM rocpd_arg) ORDER BY position"
                       ).fetchall()
    named = {n: v for _, _, n, v in args}
    assert named["count"] == str(SIZES[0] // 4) and named["bytes"] == str(SIZES[0])
    assert named["datatype"] == "ncclFloat32" and named["comm"] == "0x0000000000c0ffee"
    assert named["rank"] == "0" and named["nranks"] == "6" and named["stream"] == "0x0000000000007000"
    assert named["algo"] == "Ring" and named["seq"] == "0"
    assert [p for p, *_ in args] == list(range(len(args)))
    assert ("size_t", "count") == tuple(args[0][1:3])


def test_bus_bandwidth_is_nccl_tests_formula(multihost):
    c = collectives.calls(rocpd.connect(multihost))
    assert len(c) == 6 * 60 and (c["kernel_match"] == "order").all()
    assert (c["kernel"] == KERNEL).all()
    t = c["kernel_end"] - c["kernel_start"]
    expect = c["bytes"] / t * 2 * 5 / 6
    assert (abs(c["busbw_gbs"] - expect) <= 1e-9 * expect).all()
    assert c["bytes"].tolist() == [SIZES[int(s)] for s in c["seq"] % len(SIZES)]


def test_factors_and_sizes():
    assert bus_factor("AllReduce", 8) == pytest.approx(1.75)
    assert bus_factor("AllGather", 4) == bus_factor("ReduceScatter", 4) == 0.75
    assert bus_factor("AllToAll", 2) == 0.5
    assert bus_factor("Broadcast", 8) == bus_factor("Reduce", 8) == bus_factor("Send", 2) == 1.0
    assert collectives.message_bytes("AllGather", 1000, 4) == 4000
    assert collectives.message_bytes("AllReduce", 1000, 4) == 1000
    assert size_bucket(1000) == 1024 and size_bucket(1024) == 1024 and size_bucket(1025) == 2048


def test_summary_per_op_and_bucket(multihost):
    c = collectives.calls(rocpd.connect(multihost))
    s = collectives.summary(c)
    assert s["Size"].tolist() == ["1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB",
                                  "4 MiB", "16 MiB", "64 MiB", "256 MiB"]
    assert (s["Calls"] == 36).all() and (s["Operation"] == "AllReduce").all()
    row = s[s["Size"] == "1 MiB"].iloc[0]
    g = c[c["bucket"] == 1 << 20]
    alg = g["size_bytes"].sum() / (g["kernel_end"] - g["kernel_start"]).sum()
    assert row["AlgBwGBs"] == pytest.approx(alg) and row["BusBwGBs"] == pytest.approx(alg * 5 / 3)


@pytest.mark.parametrize("with_seq", [True, False])
def test_clock_offsets_recovered_within_latency(tmp_path, with_seq):
    paths = build_multihost(tmp_path, SKEWS, latency_ns=LATENCY, seed=3, with_seq=with_seq)
    off = collectives.clock_offsets(collectives.calls(rocpd.connect(paths)))
    got = dict(zip(off["host"], off["offset_ns"], strict=True))
    assert set(got) == {"node00", "node01", "node02"} and got["node00"] == 0
    for h, skew in enumerate(SKEWS):
        assert abs(got[f"node{h:02d}"] - skew) <= LATENCY, (h, got)
    assert (off["uncertainty_ns"] <= LATENCY).all() and (off["collectives"] == 60).all()
    # Aligned, each collective's completions on all hosts lie within twice the latency.
    aligned = collectives.clock.apply(collectives.calls(rocpd.connect(paths)), off)
    aligned["n"] = aligned.groupby(["guid"]).cumcount()
    spread = aligned.groupby("n")["kernel_end"].agg(lambda e: e.max() - e.min())
    assert len(spread) == 60 and spread.max() <= 2 * LATENCY


def test_arrivals_on_one_clock_find_the_late_rank(tmp_path):
    """Rank 4 (node02, clock 12 ms behind) arrives last at every collective: on one clock it waits
    least; on the raw clocks it would seem to arrive 12 ms early."""
    from rocpd.collectives.clock import arrival_waits

    c = collectives.calls(rocpd.connect(build_multihost(tmp_path, SKEWS, late_rank=4)))
    w = arrival_waits(c, collectives.clock_offsets(c))
    assert w.iloc[0]["rank"] == 4 and w.iloc[0]["last_arrivals"] == 60
    raw = arrival_waits(c)
    assert raw[raw["rank"] == 4]["last_arrivals"].iloc[0] == 0


def test_one_host_has_no_offsets(tmp_path):
    paths = build_multihost(tmp_path, [0], ranks_per_host=3, calls=10)
    assert collectives.clock_offsets(collectives.calls(rocpd.connect(paths))).empty


def test_summary_and_ranks_print_collectives(multihost, cli):
    code, out, _ = cli("summary", *multihost)
    assert code == 0 and "== COLLECTIVES ==" in out and "256 MiB" in out
    assert "RCCL_API" in out.upper()  # the calls' own API table, as rocprofv3's rccl_api_stats
    code, out, _ = cli("ranks", *multihost)
    assert code == 0 and "== COLLECTIVES PER RANK ==" in out and "== CLOCK OFFSETS ==" in out
    assert "node02" in out and "== COLLECTIVE ARRIVALS ==" in out
    assert "== COLLECTIVES PER SIZE ACROSS RANKS ==" in out


def test_slow_collectives_finding(tmp_path):
    """With 2 ranks the bus bandwidth is the algorithm bandwidth. 4 MiB all-reduces at 100 GB/s
    set the run's best; 64 MiB ones at 10 GB/s are far below it: a finding naming them. All at
    100 GB/s: none."""
    from rocpd.analysis import analyze

    def run(path, slow_gbs):
        with DatabaseBuilder(path, pid=7, rank=0) as b:
            t = 1_000_000
            for i in range(40):
                size = 64 << 20 if i % 2 else 4 << 20
                gbs = slow_gbs if i % 2 else 100
                b.collective("ncclAllReduce", t, t + 5_000, count=size // 4, datatype="ncclFloat32",
                             comm=1, rank=0, nranks=2, seq=i)
                b.kernel(KERNEL, t + 10_000, t + 10_000 + size // gbs)
                t += 10_000_000
        return [str(path)]

    fast = analyze(rocpd.connect(run(tmp_path / "fast.db", 100))).findings()
    assert not [f for f in fast if f.rule == "slow-collectives"]
    slow = [f for f in analyze(rocpd.connect(run(tmp_path / "slow.db", 10))).findings()
            if f.rule == "slow-collectives"]
    assert len(slow) == 1 and "AllReduce of 64 MiB runs at 10.0 GB/s" in slow[0].title
    assert "of the 100 GB/s reference" in slow[0].title
    assert "best bus bandwidth measured" in slow[0].evidence[-1]


def test_queue_length_per_stream(tmp_path):
    """Launches (API calls with the kernel's correlation id) join the queue, kernel ends leave."""
    path = tmp_path / "q.db"
    with DatabaseBuilder(path, pid=9) as b:
        for i in range(4):  # four launches at 0, 10, 20, 30 µs; kernels run back to back from 100
            corr = b.next_correlation()
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", 1_000_000 + i * 10_000,
                     1_000_000 + i * 10_000 + 2_000, correlation_id=corr)
            b.kernel("k", 1_100_000 + i * 50_000, 1_150_000 + i * 50_000, correlation_id=corr,
                     stream=1)
        b.kernel("solo", 2_000_000, 2_010_000, stream=2)  # no launch call: queued while running
    q = collectives.queue_lengths(rocpd.connect([str(path)]))
    by = {sid: g["queue_length"].tolist() for sid, g in q.groupby("stream_id")}
    assert sorted(by.values(), key=len) == [[1, 0], [1, 2, 3, 4, 3, 2, 1, 0]]
    s = collectives.queue_summary(q)
    assert sorted(s["kernels_max_queued"]) == [1, 4]


def test_rocm_views_read_the_calls(multihost):
    """ROCm's own view SQL over a database with collective calls: the same regions as ours."""
    from rocm_views import compare, mismatches  # tests/rocm_views.py, beside tests/conftest.py

    assert not mismatches(multihost[0])
    assert compare(multihost[0])["regions"][0][0] == 60


def test_report_has_collectives_offsets_and_queue_length(multihost, tmp_path, cli):
    out = tmp_path / "r.md"
    rc, _, err = cli("report", *multihost, "-o", out, "--no-perfetto")
    assert rc == 0, err
    md = out.read_text()
    assert "## Collectives" in md and "Clock offsets between hosts" in md and "node02" in md
    assert "## Queue length per stream" in md and "kernels_max_queued" in md
    assert (tmp_path / "r_files" / "queue_length.png").read_bytes()[:4] == b"\x89PNG"
    rc, _, err = cli("report", *multihost, "-o", tmp_path / "r.html", "--no-perfetto")
    html = (tmp_path / "r.html").read_text()
    assert rc == 0 and "section failed" not in html and "Queue length per stream" in html
