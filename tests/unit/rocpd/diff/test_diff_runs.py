"""rocpd diff over several runs per side (rocpd.diff.runs): the host's pace moves from run to run
of one unchanged program by more than its steps differ within a run, so host-side changes are
judged against the runs' spread (with one run per side, never: "within run-to-run noise unless
repeated", the verdict resting on GPU work); GPU work is judged by its steps, and a real
regression is named first."""

import diff_pairs
import pytest

import rocpd

# ~4.8 ms steps; the host's own work per step in each run (µs): the run-to-run pace.
PACE_A = [40.0, 300.0, 150.0]
PACE_B = [400.0, 90.0, 220.0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return {"a": diff_pairs.repeats(tmp / "a", "a", PACE_A, seed=10),
            "b": diff_pairs.repeats(tmp / "b", "b", PACE_B, seed=20),
            "slow": diff_pairs.repeats(tmp / "slow", "slow", PACE_B, seed=30,
                                       slow={"gemm_out": 1.3}),
            "stalled": diff_pairs.repeats(tmp / "stalled", "stalled", [1040.0, 1090.0, 1060.0],
                                          seed=40)}


def _step(d):
    return d.summary.set_index("metric").loc["step time"]


def test_one_run_per_side_with_another_host_pace_is_no_significant_change(runs):
    """The host's pace alone: 40 against 400 µs of its own work per step, the GPU idling
    meanwhile (+7.5 % of a step, above the idle floor): one run per side cannot tell that from
    run-to-run noise, and the verdict says so with the command that would."""
    a, b = runs["a"][0], runs["b"][0]
    d = rocpd.diff(a, b)
    idle = d.items.iloc[0]
    assert (idle["line"], idle["kind"]) == ("train.py:38", "idle")
    assert idle["CiLowNs"] > 0 and idle["DeltaNs"] > 0.05 * _step(d)["BaseNs"]
    assert idle["verdict"] == "within run-to-run noise unless repeated" and bool(idle["host"])
    assert not d.changed and not d.items["significant"].any(), d.significant.to_string()
    v = d.verdict()
    assert v.startswith("no significant change in GPU work:"), v
    assert f"give them all: rocpd diff {a} A2 A3 A4 A5 -- {b} B2 B3 B4 B5" in v
    assert "never with one run per side: host-side time moves 20-30 % from run to run" in d.text()
    assert d.base.runs == d.new.runs == 1


def test_three_runs_per_side_of_one_program_show_no_significant_change(runs):
    d = rocpd.diff(runs["a"], runs["b"])
    assert d.base.runs == d.new.runs == 3 and d.steps_base == d.steps_new == 90
    assert not d.changed, d.significant.to_string()
    for name in ("summary", "items", "lines", "phases"):
        assert not getattr(d, name)["significant"].any(), name
    assert "3 runs, 3 process(es) with GPU work, 90 step(s)" in d.text()
    assert "outside the 95% t interval of the 3 + 3 runs' own figures" in d.text()


def test_three_runs_per_side_name_a_real_regression_first(runs):
    d = rocpd.diff(runs["a"], runs["slow"])
    top = d.items.iloc[0]
    assert (top["line"], top["kind"], top["verdict"]) == ("model.py:23", "kernel", "slower")
    assert top["name"].endswith("gemm_out") and 200_000 < top["DeltaNs"] < 250_000
    assert "first: model.py:23 kernel" in d.verdict()
    assert len(d.significant) == 1, d.significant.to_string()


def test_a_host_side_change_that_repeats_counts(runs):
    """The host 1 ms late at every step's start in each of three runs: the runs agree, so the
    change clears their spread and is named first; one run of each reads it as noise."""
    d = rocpd.diff(runs["a"], runs["stalled"])
    top = d.items.iloc[0]
    assert (top["line"], top["kind"], top["verdict"]) == ("train.py:38", "idle", "slower")
    assert bool(top["host"]) and top["DeltaNs"] > top["RunNoiseNs"] > 0
    assert "first: train.py:38 idle" in d.verdict()
    assert not rocpd.diff(runs["a"][0], runs["stalled"][0]).changed


BLOCKED = "every run of one side ran before every run of the other"


def test_runs_of_one_side_all_before_the_others_are_said_to_read_a_drift_as_a_change(
        runs, tmp_path):
    """Alternated runs (A, B, A, B: the fixtures' runs start at the same times) need no word;
    three runs of B all after A's do: a drift of the machine moves each of B's runs alike."""
    assert not any(BLOCKED in n for n in rocpd.diff(runs["a"], runs["b"]).notes)
    later = diff_pairs.repeats(tmp_path / "later", "later", PACE_B, seed=20, after_s=100)
    d = rocpd.diff(runs["a"], later)
    assert any(BLOCKED in n and "(A, B, A, B, ...)" in n for n in d.notes), d.notes
    assert f"note: {BLOCKED}" in d.text()
    assert not any(BLOCKED in n for n in rocpd.diff(runs["a"][0], later[0]).notes)


def test_a_slower_line_in_a_shorter_step_is_explained(tmp_path):
    """gemm_out 30 % slower (+225 µs per step) while the host went faster (400 -> 40 µs of its
    own work per step): the step is shorter. The verdict names the line and says the step time's
    parts: GPU work up, the host's pace down, within run-to-run noise."""
    a = diff_pairs.repeats(tmp_path, "a", [400.0], seed=1)[0]
    b = diff_pairs.repeats(tmp_path, "b", [40.0], seed=2, slow={"gemm_out": 1.3})[0]
    d = rocpd.diff(a, b)
    step = _step(d)
    assert step["DeltaNs"] < 0 and bool(step["host"]) and not bool(step["significant"])
    v = d.verdict()
    assert "first: model.py:23 kernel" in v and "slower" in v, v
    gpu = d.summary.set_index("metric").loc["GPU work (sum of op times)", "DeltaNs"]
    assert gpu > 200_000
    assert f"(GPU work {gpu / 1e3:+,.3f} us; the rest, the host's pace, " \
           f"{(step['DeltaNs'] - gpu) / 1e3:+,.3f} us: within run-to-run noise unless repeated)" in v


def test_runs_are_split_by_time_from_folders_and_globs(runs, cli):
    a_dir = runs["a"][0].rsplit("/", 1)[0]
    slow_glob = runs["slow"][0].rsplit("/", 1)[0] + "/slow*.db"
    d = rocpd.diff(a_dir, slow_glob)
    assert d.base.runs == d.new.runs == 3 and d.steps_base == 90
    nested = rocpd.diff([[p] for p in runs["a"]], tuple(runs["slow"]))
    assert nested.base.runs == nested.new.runs == 3
    rc, out, err = cli("diff", *runs["a"], "--", *runs["slow"], "--all")
    assert rc == 0, err
    assert "verdict: 1 significant change; first: model.py:23 kernel" in out
    assert "more (use --top 0)" not in out
    rc, out, err = cli("diff", a_dir, slow_glob, "--top", "2")
    assert rc == 0 and "A (baseline): 3 databases" in out and "3 runs" in out, err
    rc, _, err = cli("diff", *runs["a"])
    assert rc == 1 and "3 runs given; give A B, or several per side as A1 A2 ... -- B1" in err
    rc, _, err = cli("diff", runs["a"][0], "--", "--top", "3")
    assert rc == 1 and "give the baseline's runs, one --, then the new runs" in err
