"""rocpd.energy over runs with a known power profile (profiles.py): joules per step, range,
line and kernel from a stale-repeating energy counter, or from power readings alone."""

from __future__ import annotations

import numpy as np
import pytest
from profiles import (
    IDLE_W,
    MS,
    PERIOD,
    PHASE,
    PHASES,
    READ_EVERY,
    build,
    counter_readings,
    phases,
    true_energy,
)

import rocpd
from rocpd.energy import meter, share
from rocpd.errors import RocpdError

WATTS = dict(PHASES)


@pytest.fixture(scope="module")
def counter_db(tmp_path_factory):
    return build(tmp_path_factory.mktemp("energy") / "counter.db")


def _meter(path):
    with rocpd.connect(path) as db:
        (m,) = meter.read(db)
    return m


def test_ranges_add_up_to_the_counter_and_to_the_true_energy(counter_db):
    df = rocpd.energy(counter_db, by="range")
    phase_rows = df[df["range"].isin(WATTS)]
    assert set(phase_rows["Count"]) == {3}
    ph = phases()
    first, last = ph[0][1], ph[-1][2]
    m = _meter(counter_db)
    # the phases tile the steps: their joules are the counter's E over them
    assert phase_rows["Joules"].sum() == pytest.approx(float(m.between([first], [last])[0]), rel=1e-9)
    truth = float(true_energy([last])[0] - true_energy([first])[0])
    assert phase_rows["Joules"].sum() == pytest.approx(truth, rel=0.005)
    # the whole run: every row of the kernel table (work and idle) is the counter's delta
    readings = counter_readings()
    delta = readings[-1][1] - readings[0][1]
    run = rocpd.energy(counter_db, by="kernel")
    assert run["Joules"].sum() == pytest.approx(delta, rel=0.005)
    assert run["SharePercent"].sum() == pytest.approx(100.0)


def test_each_phase_is_its_power_times_its_time_within_one_counter_period(counter_db):
    m = _meter(counter_db)
    assert m.source == "counter" and m.resolution_ns == PERIOD
    for name, s, e, w in phases():
        j = float(m.between([s], [e])[0])
        assert abs(j - w * (e - s) / 1e9) <= w * PERIOD / 1e9, (name, s, j)
    df = rocpd.energy(counter_db, by="range").set_index("range")
    for name, w in WATTS.items():
        assert df.loc[name, "Watts"] == pytest.approx(w, abs=w * PERIOD / PHASE)
        assert df.loc[name, "Seconds"] == pytest.approx(3 * PHASE / 1e9)
        assert 0 < df.loc[name, "PlusMinusJoules"] <= df.loc[name, "Joules"]


def test_steps_are_the_detected_step_range_and_units_per_step(counter_db):
    df = rocpd.energy(counter_db, units_per_step=1000)
    assert df.attrs["step"] == "train_step" and list(df["step"]) == [0, 1, 2]
    per_step = sum(w * PHASE / 1e9 for _, w in PHASES)
    assert df["Joules"].to_numpy() == pytest.approx(per_step, rel=0.02)
    assert df["JoulesPerUnit"].to_numpy() == pytest.approx(df["Joules"].to_numpy() / 1000)
    whole = rocpd.energy(counter_db, step="")
    assert list(whole["name"]) == ["(whole run)"]


def test_kernels_and_idle_share_the_energy(counter_db):
    df = rocpd.energy(counter_db, by="kernel").set_index("kernel")
    assert set(df.index) == {"gemm_bf16", "MEMORY_COPY_DEVICE_TO_DEVICE", "idle"}
    assert df.loc["gemm_bf16", "Joules"] == pytest.approx(3 * 500 * PHASE / 1e9, rel=0.03)
    assert df.loc["MEMORY_COPY_DEVICE_TO_DEVICE", "Joules"] == pytest.approx(3 * 250 * PHASE / 1e9, rel=0.03)
    # idle: the sleep phases and the time before and after the steps, at 100 W
    assert df.loc["idle", "Watts"] == pytest.approx(IDLE_W, rel=0.1)
    assert df.loc["idle", "Joules"] == pytest.approx(IDLE_W * df.loc["idle", "Seconds"], rel=0.1)
    lines = rocpd.energy(counter_db, by="line").set_index("line")
    assert lines.loc["train.py:10", "Joules"] == pytest.approx(df.loc["gemm_bf16", "Joules"])
    assert any("proportion" in r for r in df.attrs["rules"])


def test_overlapping_kernels_share_by_their_time(tmp_path):
    path = build(tmp_path / "overlap.db", overlap=True)
    df = rocpd.energy(path, by="kernel").set_index("kernel")
    gemm = rocpd.energy(path, by="range").set_index("range").loc["gemm", "Joules"]
    # half the phase gemm_a alone, half both: gemm_a 3/4 of the phase's energy, gemm_b 1/4
    assert df.loc["gemm_a", "Joules"] + df.loc["gemm_b", "Joules"] == pytest.approx(gemm, rel=0.03)
    assert df.loc["gemm_a", "Joules"] / df.loc["gemm_b", "Joules"] == pytest.approx(3.0, rel=0.1)


def test_sharing_within_one_counter_period_is_exact():
    # 100 W from 0 to 10 s, a knot every second; A runs [0, 4] s, B [3, 4] s
    s = 1_000_000_000
    t = np.arange(11) * s
    m = meter.Meter("g", 1, 2, 0, "counter", t.astype(float), 100.0 * np.arange(11), s, 0, 10 * s)
    j, (gs, ge), lo, hi = share.work(m, [0, 3 * s], [4 * s, 4 * s])
    assert j == pytest.approx([350.0, 50.0])
    assert (lo, hi) == (0, 10 * s) and list(gs) == [4 * s] and list(ge) == [10 * s]
    assert float(m.between(gs, ge).sum()) == pytest.approx(600.0)
    # one period over all of it: the busy 6 s of 10 shared by time, 4 + 1 s of work
    m1 = meter.Meter("g", 1, 2, 0, "counter", np.array([0.0, 10 * s]), np.array([0.0, 1000.0]),
                     10 * s, 0, 10 * s)
    j1, _, _, _ = share.work(m1, [0, 3 * s], [4 * s, 4 * s])
    assert j1 == pytest.approx([400.0 * 4 / 5, 400.0 / 5])


def test_stale_readings_are_not_power_changes():
    readings = counter_readings()
    t, v = np.array(readings, dtype=float).T
    kt, ke, res = meter.counter_knots(t, v, None)
    assert res == pytest.approx(PERIOD)  # the update spacing, without the metadata
    assert len(kt) == len(np.unique(v))  # one knot per value, not one per reading
    # drawn through every reading, the 500 W phase would read as bursts: through the changes
    # E follows the true energy within one period's energy at the highest power
    mid = np.arange(t[0] + PERIOD, t[-1] - PERIOD, 7 * MS)
    e = np.interp(mid, kt, ke) + v[0]
    assert np.max(np.abs(e - (1000.0 + true_energy(mid)))) <= 500.0 * PERIOD / 1e9


def test_without_period_metadata_the_figures_hold(tmp_path):
    path = build(tmp_path / "noperiod.db", period_metadata=False)
    df = rocpd.energy(path, by="range").set_index("range")
    for name, w in WATTS.items():
        assert df.loc[name, "Joules"] == pytest.approx(3 * w * PHASE / 1e9, abs=3 * w * PERIOD / 1e9)


def test_power_only_is_integrated(tmp_path):
    path = build(tmp_path / "power.db", source="power")
    m = _meter(path)
    assert m.source == "power" and m.resolution_ns == READ_EVERY
    df = rocpd.energy(path, by="range").set_index("range")
    for name, w in WATTS.items():
        assert df.loc[name, "Joules"] == pytest.approx(3 * w * PHASE / 1e9, abs=3 * 500 * READ_EVERY / 1e9)
    assert "power readings" in df.attrs["meters"][0]


def test_missing_energy_is_one_line(tmp_path, cli):
    path = build(tmp_path / "none.db", source="none")
    with pytest.raises(RocpdError, match="rocprof run --energy"):
        rocpd.energy(path)
    rc, out, err = cli("energy", path)
    assert rc == 1 and out == ""
    assert err.strip().splitlines() == [f"rocpd: error: {meter.MISSING}"]


def test_bad_arguments(counter_db):
    with pytest.raises(RocpdError, match="choose one of"):
        rocpd.energy(counter_db, by="op")
    with pytest.raises(RocpdError, match="positive"):
        rocpd.energy(counter_db, units_per_step=0)
    with pytest.raises(RocpdError, match="no ROCTx range"):
        rocpd.energy(counter_db, step="nope")


def test_window_filter_keeps_what_lies_in_it(counter_db):
    s, e = phases()[0][1], phases()[2][2]
    df = rocpd.energy(counter_db, by="range", start=str(s), end=str(e))
    assert "train_step 0" in set(df["range"]) and "train_step 2" not in set(df["range"])


def test_a_metered_gpu_the_process_did_not_use_is_left_out(tmp_path):
    from profiles import T0, end_of_run

    from rocpd.testing.metrics import add_metric_samples

    path = build(tmp_path / "two.db")
    reads = range(T0, end_of_run(), READ_EVERY)
    # GPU 1 (another rank's) draws 300 W all along; this process ran nothing on it
    add_metric_samples(path, "device_energy", "J", [(t, 300.0 * (t - T0) / 1e9) for t in reads],
                       ordinal=1)
    with rocpd.connect(path) as db:
        assert sorted(m.gpu for m in meter.read(db)) == [0, 1]
    alone = rocpd.energy(build(tmp_path / "one.db"))
    assert rocpd.energy(path)["Joules"].to_numpy() == pytest.approx(alone["Joules"].to_numpy())
