"""rocpd diff and GPU idle: two runs of one unchanged program whose host runs at another pace
(the GPU idle per step doubles, as it did between two runs of one model on an H100) show no
significant change; a large idle regression (a fifth of the step) is still named first."""

import diff_pairs
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
    assert "mostly GPU idle (the host's pace) >= 5.0% of a baseline step (240." in d.text()
    # without the idle floor (the floor of work, 0.5 % of a step) the host's pace would count
    loose = rocpd.diff(a, again, min_idle=0)
    assert loose.changed and loose.significant.iloc[0]["kind"] == "idle"


def test_large_idle_regression_is_named_first(runs):
    """The host 1 ms (a fifth of the step) late at each step's start: the GPU idles meanwhile."""
    a, _, stalled = runs
    d = rocpd.diff(a, stalled)
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
    strict = rocpd.diff(a, stalled, min_idle=0.5)
    assert not strict.changed and strict.items.iloc[0]["verdict"] == "slower, below threshold"


def test_negative_min_idle_is_an_error(runs):
    with pytest.raises(rocpd.RocpdError, match="min_idle"):
        rocpd.diff(runs[0], runs[1], min_idle=-0.1)
