"""rocpd.memory's tables over databases written as the capture writes them (memory_runs): the
planted leak's line and growth, the planted peak's line, fragmentation from known holes, the
out-of-memory post-mortem, per step and per device, and the runs without memory records."""

from __future__ import annotations

import tracemalloc

import memory_runs as mr
import numpy as np
import pytest

import rocpd
from rocpd.errors import RocpdError
from rocpd.memory import tables

MiB, GiB = mr.MiB, mr.GiB


@pytest.fixture(scope="module")
def leak(tmp_path_factory):
    path = tmp_path_factory.mktemp("mem") / "leak.db"
    return str(path), mr.training(path, steps=10, leak=4 * MiB, skip_leak_at=(3,))


@pytest.fixture(scope="module")
def peak(tmp_path_factory):
    path = tmp_path_factory.mktemp("mem") / "peak.db"
    return str(path), mr.training(path, steps=8, leak=0, peak_step=5)


def test_leak_named_with_its_growth_per_step(leak):
    path, facts = leak
    df = rocpd.memory(path, view="leaks")
    assert list(df.columns) == tables.COLUMNS["leaks"]
    assert len(df) == 1  # parameters, activations and gradients do not grow
    r = df.iloc[0]
    assert r["line"] == f"{mr.FILE}:30" and r["function"] == "train_step"
    # one step without the leak: the robust slope still reads 4 MiB per step
    assert r["GrowthBytesPerStep"] == 4 * MiB
    assert (r["FirstBytes"], r["LastBytes"], r["Steps"], r["GrewSteps"]) == (4 * MiB, 36 * MiB, 10, 8)


def test_peak_inside_a_step_with_kinds(leak):
    """The leak run's peak: the last step's activations and gradients on top of what leaked."""
    path, facts = leak
    df = rocpd.memory(path)
    assert df["LiveBytes"].sum() == facts["peaks"][0]
    got = {(r.line, r.kind, r.allocated): (r.LiveBytes, r.Blocks) for r in df.itertuples()}
    assert got == {(f"{mr.FILE}:10", "forward/other", "before the steps"): (64 * MiB, 1),
                   (f"{mr.FILE}:30", "forward/other", "an earlier step"): (32 * MiB, 8),
                   (f"{mr.FILE}:21", "forward/other", "this step"): (16 * MiB, 1),
                   (f"{mr.FILE}:21 (backward)", "backward", "this step"): (8 * MiB, 1)}


def test_robust_slope():
    assert tables.robust_slope(np.array([0, 8, 8, 16, 16, 24], float)) == 4.0  # 8 every 2 steps
    assert tables.robust_slope(np.array([1, 2, 3, 100, 5, 6], float)) == 1.0  # a spike
    assert tables.robust_slope(np.array([5.0])) == 0.0
    y = np.arange(5000, dtype=float) * 3
    assert tables.robust_slope(y) == 3.0  # evenly chosen steps of a long run


def test_steps_table_and_summary_agree_with_what_was_planted(leak):
    path, facts = leak
    m = rocpd.memory.analyze(path)
    assert m.step_name == "step"
    st = m.steps
    assert len(st) == 10 and list(st["step"]) == list(range(10))
    assert st["GrowthBytes"].tolist() == [4 * MiB if k != 3 else 0 for k in range(10)]
    assert (st["PeakAllocatedBytes"] - st["AllocatedStartBytes"]).min() == 24 * MiB
    s = m.summary.iloc[0]
    assert s["PeakAllocatedBytes"] == facts["peaks"][0]
    assert s["AllocatedEndBytes"] == facts["end"][0]
    assert s["PeakReservedBytes"] == facts["reserved"][0]
    assert s["PeakDriverBytes"] == facts["driver"][0]
    # the timeline's slices keep the peak (each slice shows its maximum)
    assert m.timeline["AllocatedBytes"].max() == facts["peaks"][0]
    assert m.timeline["DriverBytes"].max() == facts["driver"][0]
    f = m.fragmentation.iloc[0]  # the 32 MiB buffer outside torch's segments
    assert (f["DriverBytes"], f["OutsideAllocatorBytes"]) == (facts["driver"][0], 32 * MiB)
    assert m.notes == []


def test_peak_names_the_temporary_and_kinds(peak):
    path, facts = peak
    df = rocpd.memory(path)  # the peak is the default view
    assert df.iloc[0]["line"] == f"{mr.FILE}:40" and df.iloc[0]["LiveBytes"] == GiB
    assert df["LiveBytes"].sum() == facts["peaks"][0]
    assert df["SharePercent"].sum() == pytest.approx(100.0)
    m = rocpd.memory.analyze(path)
    assert m.folded == {"GPU 0;main (train.py:10)": 64 * MiB,
                        "GPU 0;train_step (train.py:40)": GiB}
    assert sum(m.folded.values()) == facts["peaks"][0]
    assert m.steps.set_index("step").loc[5, "PeakAllocatedBytes"] == facts["peaks"][0]


def test_fragmentation_from_known_holes(tmp_path):
    facts = mr.holes(tmp_path / "h.db")
    df = rocpd.memory(str(tmp_path / "h.db"), view="fragmentation")
    r = df.iloc[0]
    assert r["AllocatedBytes"] == facts["allocated"] and r["ReservedBytes"] == facts["reserved"]
    assert r["ReservedMinusAllocatedBytes"] == r["FreeInSegmentsBytes"] == facts["free"]
    assert r["LargestFreeBlockBytes"] == facts["largest"]  # across the two touching pieces
    assert r["Segments"] == facts["segments"]
    assert r["FragmentationPercent"] == pytest.approx(100 * (1 - 60 / 85))
    # the segments came with their cudaMalloc rows: nothing held outside the allocator
    assert r["OutsideAllocatorBytes"] == 0


def test_out_of_memory_post_mortem(tmp_path):
    facts = mr.out_of_memory(tmp_path / "o.db")
    m = rocpd.memory.analyze(str(tmp_path / "o.db"))
    assert len(m.oom) == 1
    r = m.oom.iloc[0]
    assert r["line"] == f"{mr.FILE}:50" and r["RequestBytes"] == facts["chunk"]
    assert r["DeviceFreeBytes"] == facts["device_free"]
    assert r["AllocatedBytes"] == r["ReservedBytes"] == facts["chunk"] * facts["chunks"]
    assert r["LargestFreeBlockBytes"] == 0
    live = m.oom_live
    assert live["line"].tolist() == [f"{mr.FILE}:50"]
    assert live.iloc[0]["LiveBytes"] == facts["chunk"] * facts["chunks"]
    assert live.iloc[0]["Blocks"] == facts["chunks"]
    assert m.summary.iloc[0]["OOMs"] == 1


def test_devices_apart(tmp_path):
    facts = mr.training(tmp_path / "g.db", steps=6, gpus=2)
    m = rocpd.memory.analyze(str(tmp_path / "g.db"))
    assert m.summary["device"].tolist() == [0, 1]
    assert m.summary["PeakAllocatedBytes"].tolist() == [facts["peaks"][0], facts["peaks"][1]]
    growth = m.leaks.set_index("device")["GrowthBytesPerStep"]
    assert growth.to_dict() == {0: 4 * MiB, 1: 8 * MiB}


def test_unmatched_free_is_counted_not_subtracted(tmp_path):
    facts = mr.training(tmp_path / "u.db", steps=4, unmatched_free=True)
    m = rocpd.memory.analyze(str(tmp_path / "u.db"))
    assert m.summary.iloc[0]["PeakAllocatedBytes"] == facts["peaks"][0]
    assert any("1 free(s) of an address not live" in n for n in m.notes)


def test_no_steps_no_leaks(leak):
    m = rocpd.memory.analyze(leak[0], step="")
    assert m.step_name is None and m.steps.empty and m.leaks.empty
    assert len(m.peak) == 4 and set(m.peak["allocated"]) == {""}


def test_without_memory_records_one_line(tmp_path):
    mr.plain(tmp_path / "p.db")
    with pytest.raises(RocpdError) as e:
        rocpd.memory(str(tmp_path / "p.db"))
    assert str(e.value) == rocpd.memory.MISSING and "\n" not in str(e.value)
    assert not rocpd.memory.has_memory(str(tmp_path / "p.db"))
    with pytest.raises(RocpdError, match="choose one of"):
        rocpd.memory(str(tmp_path / "p.db"), view="nope")


def test_driver_allocations_only(tmp_path):
    facts = mr.driver_only(tmp_path / "d.db")
    m = rocpd.memory.analyze(str(tmp_path / "d.db"))
    assert not m.has_lines and m.peak.empty
    assert m.summary.iloc[0]["PeakDriverBytes"] == facts["driver_peak"]
    assert m.summary.iloc[0]["PeakAllocatedBytes"] == 0
    assert any("none: torch has no CUDA allocator" in n for n in m.notes)


def test_memory_stays_bounded_by_what_is_live(tmp_path):
    """40k allocator rows, at most a few blocks live: the analysis holds the live blocks and one
    figure per slice and step, not the rows (tracemalloc peak well under the rows' size)."""
    from rocpd.testing import DatabaseBuilder
    from rocpd.testing.memory import AllocatorTrace

    b = DatabaseBuilder(tmp_path / "big.db")
    m = AllocatorTrace(b)
    m.segment(mr.T0, mr.BASE, GiB)
    n = 20_000
    for i in range(n):
        t = mr.T0 + 10 + 2 * i
        m.block(t, mr.BASE + (i % 8) * MiB, MiB, site=(mr.FILE, 70 + i % 4, "loop"))
        m.block(t + 1, mr.BASE + (i % 8) * MiB, MiB, free=True)
    m.close(mr.T0 + 10 * n)
    rocpd.memory.analyze(str(tmp_path / "big.db"), points=50)  # warm imports and caches
    tracemalloc.start()
    try:
        out = rocpd.memory.analyze(str(tmp_path / "big.db"), points=50)
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.summary.iloc[0]["AllocatorEvents"] == 2 * n + 1
    assert top < 8 * MiB, top  # 40k rows as Python tuples alone would take more


def test_light_steps_are_the_analysis_steps(leak):
    """`rocpd memory` reads only ranges and GPU start times for its steps: the same steps as the
    analysis (which the report and diff hand in) on a run whose kernels run inside the steps."""
    import rocpd.analysis
    from rocpd.memory import step_ranges

    path, _ = leak
    with rocpd.connect(path) as db:
        a = rocpd.analysis.analyze(db)
        light = step_ranges.processes(db)
        assert [p.guid for p in light] == [p.guid for p in a.processes]
        assert rocpd.analysis.steps.detect(light) == a.step_name == "step"
        mine = rocpd.memory.analyze(db).steps
        theirs = a.memory.steps
    assert mine.equals(theirs)
    assert light[0].gpu["start"].dtype == np.int64 and len(light[0].gpu) == 10


def test_many_steps_keep_a_bounded_sample_of_step_ends(tmp_path, monkeypatch):
    """Past LINE_STEPS steps, each line's bytes are kept at evenly chosen step ends only: the
    growth per step is still the planted one, measured against the steps' numbers."""
    from rocpd.memory import replay

    monkeypatch.setattr(replay, "LINE_STEPS", 5)
    mr.training(tmp_path / "many.db", steps=13, leak=3 * MiB)
    m = rocpd.memory.analyze(str(tmp_path / "many.db"))
    r = m.leaks.iloc[0]
    assert r["GrowthBytesPerStep"] == 3 * MiB and r["Steps"] == 13
    assert (r["FirstBytes"], r["LastBytes"]) == (3 * MiB, 39 * MiB)
    assert len(m.steps) == 13  # every step still has its figures


def test_replay_matches_frees_by_address_and_replaces_a_lost_free():
    """The replay's bookkeeping, row by row: a free takes back what its allocation gave (its own
    size, its own device), an allocation over a live address (its free lost) replaces it, and a
    free of an address never allocated changes nothing but is counted."""
    from rocpd.memory.replay import Replay
    from rocpd.memory.rows import K_BLOCK, K_REAL, K_SEGMENT

    r = Replay(part=None)
    r.apply(1, K_SEGMENT, False, 2, 0x1000, 20 * MiB, 0)
    r.apply(2, K_BLOCK, False, 2, 0x1000, 4 * MiB, 7)
    r.apply(3, K_BLOCK, True, None, 0x1000, 0, 0)          # a free without size or device
    assert (r.devices[2].allocated, r.devices[2].reserved, r.devices[2].by_site) == (0, 20 * MiB, {})
    r.apply(4, K_REAL, False, 2, 0x9000, 8 * MiB, 0)
    r.apply(5, K_REAL, False, 3, 0x9000, 2 * MiB, 0)        # same address, the free was lost
    assert (r.devices[2].driver, r.devices[3].driver) == (0, 2 * MiB)
    assert r.apply(6, K_BLOCK, True, 2, 0x5555, MiB, 0) is None and r.unmatched == 1
    assert r.free_blocks(2) == {"largest": 20 * MiB, "free": 20 * MiB, "segments": 1}
