"""rocpd diff and GPU idle: two runs of one unchanged program whose host runs at another pace
(the GPU idle per step doubles, as it did between two runs of one model on an H100) show no
significant change; a large idle regression (a fifth of the step) is still named first."""

import diff_pairs
import numpy as np
import pytest

import rocpd

# ~4.8 ms steps (the pairs' kernels three times as long); the host's own work at each step's
# start: 40 µs in the baseline, 95 µs in the other run (bursty: now and then a pause).
SCALE = 3.0
HOST_US = 40.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("idle")
    a = diff_pairs.run(folder / "a.db", seed=1, host_us=HOST_US, scale=SCALE)
    again = diff_pairs.run(folder / "again.db", seed=2, host_us=95.0, scale=SCALE)
    stalled = diff_pairs.run(folder / "stalled.db", seed=2, host_us=HOST_US + 1000, scale=SCALE)
    return str(a), str(again), str(stalled)


def _row(df, col, value):
    return df.set_index(col).loc[value]


def test_host_pace_is_no_significant_change(runs):
    a, again, _ = runs
    d = rocpd.diff(a, again)
    step, idle = _row(d.summary, "metric", "step time"), _row(d.summary, "metric", "GPU idle in the step")
    assert 4.5e6 < step["BaseNs"] < 5.5e6, step
    # the GPU idle per step about doubles, and in these two runs it really did: its interval
    # is above zero; what keeps it from counting is its size, 1.5 % of the step
    assert 40e3 < idle["BaseNs"] < 70e3 and 100e3 < idle["NewNs"] < 140e3, idle
    assert idle["CiLowNs"] > 0 and idle["verdict"] == "slower, below threshold"
    assert d.verdict().startswith("no significant change:"), d.verdict()
    assert not d.changed
    for name in ("summary", "items", "lines", "kernels", "phases"):
        table = getattr(d, name)
        assert not table["significant"].any(), table[table["significant"]].to_string()
    late = d.items.iloc[0]
    assert (late["line"], late["kind"], late["verdict"]) == ("train.py:38", "idle",
                                                            "slower, below threshold")
    floor = f"{0.05 * step['BaseNs'] / 1e3:,.3f}"
    assert f"mostly GPU idle (the host's pace) >= 5.0% of a baseline step ({floor} us)" in d.text()
    # without the idle floor (the floor of work, 0.5 % of a step) and the between-run noise
    # (rocpd.diff.runs) the host's pace would count
    loose = rocpd.diff(a, again, min_idle=0, run_noise=0)
    assert loose.changed and loose.significant.iloc[0]["kind"] == "idle"


def test_large_idle_regression_is_named_first(runs):
    """The host 1 ms (a fifth of the step) late at each step's start: the GPU idles meanwhile.
    With one run per side that is within what host-side time moves between runs (rocpd.diff.runs,
    half a step): the verdict says so and how to repeat; without that floor it is named first."""
    a, _, stalled = runs
    one = rocpd.diff(a, stalled)
    assert not one.changed and one.items.iloc[0]["kind"] == "idle"
    assert one.items.iloc[0]["verdict"] == "within run-to-run noise unless repeated"
    v = one.verdict()
    assert v.startswith("no significant change in GPU work:"), v
    assert "host-side: train.py:38 idle" in v and f"rocpd diff {a} A2 A3 A4 A5 -- {stalled} B2" in v
    d = rocpd.diff(a, stalled, run_noise=0)
    top = d.items.iloc[0]
    assert (top["line"], top["kind"], top["verdict"]) == ("train.py:38", "idle", "slower")
    assert bool(top["significant"]) and 900e3 < top["DeltaNs"] < 1100e3 and top["CiLowNs"] > 0
    assert d.lines.iloc[0]["line"] == "train.py:38" and bool(d.lines.iloc[0]["significant"])
    assert "first: train.py:38 idle" in d.verdict()
    ph = d.phases.iloc[0]
    assert ph["phase"] == "idle" and bool(ph["significant"]) and ph["CiLowNs"] > 0
    idle = _row(d.summary, "metric", "GPU idle in the step")
    assert bool(idle["significant"]) and idle["verdict"] == "slower"
    assert bool(_row(d.summary, "metric", "step time")["significant"])
    # a floor above the change turns it into "below threshold", not into silence
    strict = rocpd.diff(a, stalled, min_idle=0.5, run_noise=0)
    assert not strict.changed and strict.items.iloc[0]["verdict"] == "slower, below threshold"


def test_negative_min_idle_is_an_error(runs):
    with pytest.raises(rocpd.RocpdError, match="min_idle"):
        rocpd.diff(runs[0], runs[1], min_idle=-0.1)


# Two runs of one unchanged program whose baseline's GPU idle is heavy-tailed, as on an H100
# (GPU idle 0.208 -> 0.074 ms per step, the step 5 % shorter, the interval of the mean excluding
# zero): most steps idle 0.05-0.1 ms, five of thirty in the baseline wait ~1 ms for the host.
# By plain means this pair reads 0.216 -> 0.077 ms, interval [-0.273, -0.020], the step -5.6 %.
PAUSES = {3: 900.0, 9: 1100.0, 15: 850.0, 22: 1000.0, 27: 800.0}


@pytest.fixture(scope="module")
def heavy_tail(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tail")
    a = diff_pairs.run(folder / "a.db", seed=1, host_us=50.0, scale=1.5, pauses=PAUSES)
    b = diff_pairs.run(folder / "b.db", seed=2, host_us=50.0, scale=1.5)
    return str(a), str(b)


def test_heavy_tailed_idle_of_an_unchanged_pair_is_no_change(heavy_tail):
    d = rocpd.diff(*heavy_tail)
    assert d.verdict().startswith("no significant change:"), d.verdict()
    assert not d.changed
    for name in ("summary", "items", "lines", "kernels", "phases"):
        table = getattr(d, name)
        assert not table["significant"].any(), table[table["significant"]].to_string()
    idle = _row(d.summary, "metric", "GPU idle in the step")
    assert 40e3 < idle["BaseNs"] < 100e3 and 40e3 < idle["NewNs"] < 100e3, idle
    assert abs(_row(d.summary, "metric", "step time")["DeltaPercent"]) < 1
    assert "GPU idle a 20% trimmed mean" in d.text()
    # the figures add up: the idle of the items is the idle phase and the step's idle
    it = d.items[d.items["kind"].isin(["idle", "sync"])]
    assert it["BaseNs"].sum() == pytest.approx(_row(d.phases, "phase", "idle")["BaseNs"])
    assert it["NewNs"].sum() == pytest.approx(idle["NewNs"])
    by_line = d.items.groupby("line")["BaseNs"].sum()
    assert by_line.to_dict() == pytest.approx(d.lines.set_index("line")["BaseNs"].to_dict())


def test_plain_means_read_the_heavy_tail_as_a_change(heavy_tail):
    """The same pair compared by plain means (--trim 0, as before the trimmed idle): the five
    paused steps make the baseline's idle about three times the other's and the step about 5 %
    longer, both intervals clear of zero: what the H100 pair read."""
    d = rocpd.diff(*heavy_tail, trim=0, run_noise=0)
    idle = _row(d.summary, "metric", "GPU idle in the step")
    step = _row(d.summary, "metric", "step time")
    assert idle["BaseNs"] > 2.5 * idle["NewNs"] and idle["CiHighNs"] < 0
    assert step["DeltaPercent"] < -5 and step["CiHighNs"] < 0 and bool(step["significant"])
    assert d.changed and d.significant.iloc[0]["kind"] == "idle"
    assert "per step: mean over the steps;" in d.text()


def test_trimmed_weights_are_the_trimmed_mean_of_each_resample():
    from rocpd.diff.bootstrap import trimmed

    rng = np.random.default_rng(3)
    idle = rng.pareto(1.5, 30)
    counts = rng.multinomial(30, np.full(30, 1 / 30), size=50).T
    w = trimmed(idle, counts, 0.2)
    for r in range(counts.shape[1]):
        drawn = np.sort(np.repeat(idle, counts[:, r]))
        assert idle @ w[:, r] == pytest.approx(drawn[6:24].mean())
    assert np.allclose(trimmed(idle, counts, 0.0), counts / 30)  # trim 0: the mean


def test_trim_out_of_range_is_an_error(heavy_tail):
    with pytest.raises(rocpd.RocpdError, match="trim 0.5"):
        rocpd.diff(*heavy_tail, trim=0.5)
