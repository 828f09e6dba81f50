"""rocpd diff of runs without GPU work (rocpd.diff.cpu): a CPU training loop's ROCTx phases and
sampled lines, per step, with the statistics and the between-run noise rules of a GPU diff (all
of such a run is the host's: one run per side counts a change from half a step, several runs
their spread)."""

import cpu_pairs
import pytest

import rocpd


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cpu")
    return {"a": cpu_pairs.run(tmp / "a.db", seed=1),
            "again": cpu_pairs.run(tmp / "again.db", seed=2, pace=1.1),
            "slow": cpu_pairs.run(tmp / "slow.db", seed=3, slow={"data": 4.0}),
            "a3": cpu_pairs.repeats(tmp / "a3", "a", [1.0, 1.15, 0.9], seed=10),
            "b3": cpu_pairs.repeats(tmp / "b3", "b", [1.1, 0.95, 1.05], seed=20,
                                    slow={"data": 1.5})}


def test_unchanged_cpu_runs_show_no_significant_change(runs):
    """Another run of the program, its host 10 % slower over all: no phase, no line counts."""
    d = rocpd.diff(runs["a"], runs["again"])
    assert not d.base.gpu and d.steps_base == d.steps_new == 30
    assert not d.changed, d.significant.to_string()
    for name in ("summary", "items", "lines", "phases"):
        assert not getattr(d, name)["significant"].any(), name
    assert list(d.summary["metric"]) == ["step time"]
    assert d.verdict().startswith("no significant change: step time"), d.verdict()
    assert set(d.items["kind"]) == {"range", "sampled"} and d.items["host"].all()
    assert "without GPU work (ROCTx ranges and samples), 30 step(s)" in d.text()


def test_slowed_phase_is_named_first(runs):
    d = rocpd.diff(runs["a"], runs["slow"])
    top = d.items.iloc[0]
    assert (top["kind"], top["name"], top["verdict"]) == ("range", "data", "slower")
    assert 3_400_000 < top["DeltaNs"] < 3_800_000 and top["CiLowNs"] > 0
    assert d.verdict().startswith("1 significant change; first: range data +3,"), d.verdict()
    assert d.phases.iloc[0]["phase"] == "data" and bool(d.phases.iloc[0]["significant"])
    # by sampled line: the loader's two lines (read_batch the larger), no model line
    lines = d.lines.set_index("line")
    assert list(d.lines["line"][:2]) == ["loader.py:12", "loader.py:20"]
    assert lines.loc["loader.py:12", "DeltaNs"] > lines.loc["loader.py:20", "DeltaNs"] > 1_200_000
    assert abs(lines.loc["model.py:40", "DeltaPercent"]) < 5
    step = d.summary.iloc[0]
    assert step["metric"] == "step time" and bool(step["significant"]) and step["verdict"] == "slower"


def test_three_cpu_runs_per_side_name_a_smaller_phase_change(runs):
    """The data phase 1.5 times as long (+600 µs, 11 % of a step): less than one run per side
    can tell from run-to-run noise, but three runs whose paces differ by up to 25 % agree on it."""
    one = rocpd.diff(runs["a3"][0], runs["b3"][0])
    assert not one.changed and one.items.iloc[0]["name"] == "data"
    assert one.items.iloc[0]["verdict"] == "within run-to-run noise unless repeated"
    d = rocpd.diff(runs["a3"], runs["b3"])
    assert d.base.runs == d.new.runs == 3
    top = d.items.iloc[0]
    assert (top["kind"], top["name"], top["verdict"]) == ("range", "data", "slower")
    assert top["DeltaNs"] > top["RunNoiseNs"] > 0
    assert "first: range data" in d.verdict()
    sig = set(d.significant["name"])
    assert sig <= {"data", "read_batch", "decode"}, d.significant.to_string()


def test_samples_without_frames_are_compared_as_no_line(tmp_path):
    """A sample with no frames (no line, no function) is counted under no line, not an error:
    the analysis holds sample texts as categories, missing where there is no frame."""
    a = cpu_pairs.run(tmp_path / "fa.db", seed=1, frameless=True)
    b = cpu_pairs.run(tmp_path / "fb.db", seed=2, frameless=True)
    d = rocpd.diff(a, b)
    assert not d.changed, d.significant.to_string()
    sampled = d.items[d.items["kind"] == "sampled"]
    assert "(unknown)" in set(sampled["name"]), sorted(set(sampled["name"]))
