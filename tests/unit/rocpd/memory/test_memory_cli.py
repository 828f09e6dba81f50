"""`rocpd memory`, the report's GPU memory section, `rocpd diff`'s memory line, the memory
counters of the Perfetto and Chrome exports, the findings, and ROCm's views over the same
databases (the allocator's rows listed, the driver's REAL rows counted once)."""

from __future__ import annotations

import json

import memory_runs as mr
import pytest

import rocpd
import rocpd.analysis
from rocpd.memory.section import report_section
from rocpd.report import context

MiB, GiB = mr.MiB, mr.GiB


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    d = tmp_path_factory.mktemp("memcli")
    out = {"leak": d / "leak.db", "peak": d / "peak.db", "oom": d / "oom.db", "plain": d / "plain.db",
           "frag": d / "frag.db", "split": d / "split.db", "bigger": d / "bigger.db"}
    mr.training(out["leak"], steps=8, leak=4 * MiB)
    mr.training(out["peak"], steps=8, leak=0, peak_step=4)
    mr.training(out["bigger"], steps=8, leak=0, peak_step=4, temp=2 * GiB)
    mr.out_of_memory(out["oom"])
    mr.plain(out["plain"])
    mr.holes(out["frag"])
    mr.split(out["split"])
    return out


def test_cli_names_leak_peak_and_fragmentation(cli, dbs, tmp_path):
    rc, out, err = cli("memory", dbs["leak"], "--flame", tmp_path / "f.svg", "--folded",
                       tmp_path / "f.folded", "--csv", tmp_path / "p.csv")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "rocpd memory: torch-caching-allocator; step range: 'step'"
    assert lines[1].startswith("pid 1000 GPU 0: peak allocated 116.00 MiB, reserved 512.00 MiB,"
                               " held at the driver 544.00 MiB")
    assert "== LIVE AT THE PEAK, BY LINE ==" in out and "== LEAKS: LINES GROWING STEP OVER STEP ==" in out
    leak_row = next(x for x in lines if "train.py:30" in x and "MiB" in x and "train_step" in x
                    and out.index(x) > out.index("== LEAKS"))
    assert "4.00 MiB" in leak_row and "28.00 MiB" in leak_row
    assert "== FRAGMENTATION AT THE PEAK ==" in out and "OUT OF MEMORY" not in out
    folded = (tmp_path / "f.folded").read_text().splitlines()
    assert f"GPU 0;main (train.py:10) {64 * MiB}" in folded
    svg = (tmp_path / "f.svg").read_text()
    assert svg.startswith("<svg") and "bytes" in svg and "train.py:30" in svg
    assert (tmp_path / "p.csv").read_text().splitlines()[0] == \
        "process,rank,pid,device,line,function,kind,allocated,LiveBytes,Blocks,SharePercent"


def test_cli_views_and_oom(cli, dbs):
    rc, out, _ = cli("memory", dbs["oom"])
    assert rc == 0
    assert "a request of 4.00 GiB failed at /home/u/train.py:50 (grow); the driver had 2.00 GiB" \
           " free; allocated 12.00 GiB, reserved 12.00 GiB, largest free block in the segments 0 B" in out
    assert "live then, by line:" in out
    rc, out, _ = cli("memory", dbs["leak"], "--view", "steps", "--all")
    assert rc == 0 and "== PER STEP ==" in out and out.count(" step ") >= 8
    rc, out, _ = cli("memory", dbs["peak"], "--view", "leaks")
    assert rc == 0 and "no line grows step over step (8 steps, step range 'step')" in out
    rc, out, _ = cli("memory", dbs["leak"], "--view", "oom")
    assert rc == 0 and out.endswith("== OUT OF MEMORY ==\nno out-of-memory recorded\n")
    rc, out, _ = cli("memory", dbs["leak"], "--no-steps", "--view", "leaks")
    assert rc == 0 and "no steps: leaks are found step over step" in out


def test_cli_without_memory_records_one_line(cli, dbs):
    rc, out, err = cli("memory", dbs["plain"])
    assert rc != 0 and out == ""
    assert err.strip().splitlines() == [f"rocpd: error: {rocpd.memory.MISSING}"]


def test_report_section_only_with_memory(dbs):
    with rocpd.connect(dbs["peak"]) as db:
        ctx = context(db)
        sec = report_section(ctx)
        ctx.format = "md"
        md = report_section(ctx).markdown
    assert sec is not None and sec.id == "memory"
    assert "Live at the peak, by line" in sec.html and "<svg" in sec.html
    assert "/home/u/train.py:40" in md and "1.00 GiB" in md and "Fragmentation at the peak" in md
    assert "**Per step**" in md and "Per step" in sec.html
    with rocpd.connect(dbs["plain"]) as db:
        assert report_section(context(db)) is None


def test_findings(dbs):
    with rocpd.connect(dbs["leak"]) as db:
        f = {x.rule: x for x in rocpd.analysis.analyze(db).findings()}
    assert "memory-leak" in f and "out-of-memory" not in f
    assert f["memory-leak"].title.startswith("GPU memory grows by 4.00 MiB per step, allocated at"
                                             " train.py:30")
    assert f["memory-leak"].sites == [f"{mr.FILE}:30"]
    with rocpd.connect(dbs["oom"]) as db:
        f = {x.rule: x for x in rocpd.analysis.analyze(db).findings()}
    assert f["out-of-memory"].title == ("the program ran out of GPU memory at train.py:50: a"
                                        " request of 4.00 GiB failed")
    with rocpd.connect(dbs["split"]) as db:
        f = {x.rule: x for x in rocpd.analysis.analyze(db).findings()}
    assert f["memory-fragmentation"].title == ("50 % of the reserved GPU memory is free but split"
                                               " into holes at the peak: the largest takes"
                                               " 5.00 MiB")
    for name in ("frag", "peak"):  # the largest hole 60 MiB of 85 MiB free; 1 GiB of 2 GiB
        with rocpd.connect(dbs[name]) as db:
            assert "memory-fragmentation" not in {x.rule for x in rocpd.analysis.analyze(db).findings()}
    with rocpd.connect(dbs["peak"]) as db:
        rules = {x.rule for x in rocpd.analysis.analyze(db).findings()}
    assert not rules & {"memory-leak", "out-of-memory", "memory-fragmentation"}


def test_diff_reports_a_changed_peak_by_line(cli, dbs):
    d = rocpd.diff(str(dbs["peak"]), str(dbs["bigger"]))
    m = d.memory.set_index(["metric", "line"])
    assert m.loc[("peak allocated", ""), "DeltaBytes"] == GiB
    assert m.loc[("live at the peak", "train.py:40"), ["BaseBytes", "NewBytes"]].tolist() == [GiB, 2 * GiB]
    assert "GPU memory peak +1.00 GiB" in d.verdict() and "at train.py:40" in d.verdict()
    rc, out, _ = cli("diff", dbs["peak"], dbs["bigger"])
    assert rc == 0
    assert ("GPU memory peak: 1.06 GiB -> 2.06 GiB (+1.00 GiB, +94.1%), changed; at the peak:"
            " train.py:40 +1.00 GiB (1.00 GiB -> 2.00 GiB)") in out
    same = rocpd.diff(str(dbs["peak"]), str(dbs["peak"]))
    assert not same.memory["changed"].any() and "GPU memory" not in same.verdict()
    assert rocpd.diff(str(dbs["peak"]), str(dbs["plain"])).memory is None


def _perfetto_counters(path):
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the 'perfetto' package is not installed")
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    names = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
             if p.HasField("track_descriptor") and p.track_descriptor.HasField("counter")}
    out: dict[str, list] = {}
    for p in trace.packet:
        e = p.track_event
        if p.HasField("track_event") and e.type == pb.TrackEvent.TYPE_COUNTER:
            v = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
            out.setdefault(names[e.track_uuid], []).append(v)
    return out


def test_exports_carry_allocated_and_reserved(dbs, tmp_path):
    from rocpd.export import chrome, perfetto

    with rocpd.connect(dbs["peak"]) as db:
        chrome.write(db, str(tmp_path / "t.json"))
        perfetto.write(db, str(tmp_path / "t.pftrace"))
    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    series: dict[str, list] = {}
    for e in ev:
        if e.get("ph") == "C":
            series.setdefault(e["name"], []).append(e["args"]["value"])
    peak = rocpd.memory(str(dbs["peak"]), view="summary").iloc[0]
    assert max(series["Torch allocated bytes (GPU 0)"]) == peak["PeakAllocatedBytes"]
    assert max(series["Torch reserved bytes (GPU 0)"]) == peak["PeakReservedBytes"] == 2 * GiB
    # the runtime's track: its own rows only (the segment's cudaMalloc and the 32 MiB buffer)
    assert max(series["Allocated bytes (GPU 0)"]) == peak["PeakDriverBytes"] == 2 * GiB + 32 * MiB
    pf = _perfetto_counters(tmp_path / "t.pftrace")
    assert max(pf["Torch allocated bytes (GPU 0)"]) == peak["PeakAllocatedBytes"]
    assert max(pf["Torch reserved bytes (GPU 0)"]) == 2 * GiB
    assert max(pf["Allocated bytes (GPU 0)"]) == 2 * GiB + 32 * MiB


def test_rocm_views_list_every_row_and_real_counts_once(dbs):
    """ROCm's own view SQL (the external judge) over a database with allocator rows: every row
    listed with its category and level, and the REAL rows alone sum to the driver's bytes."""
    rocm_views = pytest.importorskip("rocm_views")
    con = rocm_views.connect_with_rocm_views(dbs["peak"])
    try:
        ours = con.execute("SELECT COUNT(*) FROM main.memory_allocations").fetchone()[0]
        theirs = dict(con.execute("SELECT category, COUNT(*) FROM temp.memory_allocations"
                                  " GROUP BY category").fetchall())
        real = con.execute("SELECT SUM(size) FROM temp.memory_allocations WHERE level = 'REAL'"
                           " AND type = 'ALLOC'").fetchone()[0]
        levels = dict(con.execute("SELECT category, GROUP_CONCAT(DISTINCT level) FROM"
                                  " temp.memory_allocations GROUP BY category").fetchall())
    finally:
        con.close()
    assert sum(theirs.values()) == ours
    assert set(theirs) == {"MEMORY_ALLOCATION", "TORCH_ALLOCATOR_BLOCK", "TORCH_ALLOCATOR_SEGMENT"}
    assert levels == {"MEMORY_ALLOCATION": "REAL", "TORCH_ALLOCATOR_BLOCK": "VIRTUAL",
                      "TORCH_ALLOCATOR_SEGMENT": "VIRTUAL"}
    assert real == 2 * GiB + 32 * MiB
    got = rocm_views.compare(dbs["peak"])["memory_allocations"]
    assert got[0] == got[1]


def test_driver_figure_not_recorded_is_said(cli, tmp_path):
    """Allocator rows without the runtime's (a run whose GPU backend recorded no allocations):
    the driver's figure is "not recorded", not 0 B."""
    from rocpd.testing import DatabaseBuilder
    from rocpd.testing.memory import AllocatorTrace

    b = DatabaseBuilder(tmp_path / "a.db")
    m = AllocatorTrace(b)
    m.segment(mr.T0, mr.BASE, 20 * MiB, real=False)
    m.block(mr.T0 + 1, mr.BASE, 4 * MiB, site=(mr.FILE, 90, "main"))
    m.close(mr.T0 + 100)
    rc, out, _ = cli("memory", tmp_path / "a.db")
    assert rc == 0
    assert out.splitlines()[1] == ("pid 1000 GPU 0: peak allocated 4.00 MiB, reserved 20.00 MiB,"
                                   " held at the driver not recorded; 2 allocator events")
