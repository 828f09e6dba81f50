"""rocpd diff on real traces: two runs of one small model, the second with one layer widened,
name that layer's line first with an interval above zero; two runs of the unchanged model show
no significant change; the HTML page outlines the widened layer's kernels in both median steps."""

import json
import re

import pytest
from gpuutil import ROOT, rocprof_run

import rocpd
import rocpd.diff

torch = pytest.importorskip("torch")

WIDENED = ROOT / "tests/gpu/workloads/widened.py"


def _line(marker):
    for i, text in enumerate(WIDENED.read_text().splitlines(), 1):
        if marker in text:
            return f"widened.py:{i}"
    raise AssertionError(marker)


def _run(tmp_path, name, *args):
    folder = tmp_path / name
    folder.mkdir()
    db, _ = rocprof_run(folder, str(WIDENED), "--steps", "30", *args)
    return str(db)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("widened")
    return {"base": _run(tmp, "base"), "again": _run(tmp, "again"),
            "widened": _run(tmp, "widened", "--widen", "4")}


def test_widened_layer_is_named_first(runs, tmp_path):
    d = rocpd.diff(runs["base"], runs["widened"])
    print(d.text(top=8, units="ms"))  # the closing note quotes it
    line = _line("# WIDENED_LAYER")
    assert d.base.step_name == d.new.step_name == "step" and d.steps_base == d.steps_new == 30
    for table in (d.items, d.lines):
        top = table.iloc[0]
        assert top["line"] == line, table.head(5).to_string()
        assert bool(top["significant"]) and top["CiLowNs"] > 0
    assert f"first: {line}" in d.verdict()
    ph = d.phases.set_index("phase")
    assert bool(ph.iloc[0]["significant"]) and ph.index[0] in ("forward", "other")
    page = tmp_path / "diff.html"
    from rocpd.report import diff as diff_page

    diff_page.write(d, str(page))
    m = re.search(r"<script type='application/json' id='tld-data'>(.*?)</script>", page.read_text(), re.S)
    data = json.loads(m.group(1).replace("<\\/", "</"))
    assert data["marked"] >= 2, "the widened layer's kernels are not outlined in both runs"


def test_unchanged_model_shows_no_significant_change(runs):
    """No piece of work and no line changes significantly, nor the GPU idle per step: it follows
    the host's pace, which two runs do not share (its typical step doubled between two runs on an
    H100, and a few steps of one run waited ~1 ms for the host), so it is a trimmed mean per step
    and counts from --min-idle of a step. The step time as a whole may change, where the GPU's
    clock differs between the runs: the verdict then says so."""
    d = rocpd.diff(runs["base"], runs["again"])
    print(d.text(top=5, units="ms"))
    assert not len(d.significant), d.verdict()
    assert not d.lines["significant"].any(), d.lines.head(5).to_string()
    idle = d.summary.set_index("metric").loc["GPU idle in the step"]
    assert not bool(idle["significant"]), d.summary.to_string()


# A small model's training loop, 60 steps, as users run it: host-paced, its GPU idle and step
# time moving from run to run by tens of per cent while its kernels do not.
TRAIN = ("--train", "--steps", "60", "--width", "1024", "--batch", "4096")


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("training")
    # Alternated (A, B, A, B, ...), as the manual says to run them: three runs of A and then
    # three of B read a drift of the host between the blocks as a change (seen here: +290 us of
    # host-side step time, all three of B's runs alike; rocpd diff says so in a note).
    runs = {"base": [], "again": []}
    for i in range(3):
        for side in runs:
            runs[side].append(_run(tmp, f"{side}{i}", *TRAIN))
    return {**runs, "widened": _run(tmp, "widened", *TRAIN, "--widen", "4")}


def test_unchanged_training_runs_show_no_significant_change(training):
    """Each pair of two runs of the unchanged loop, and the three runs of each side together:
    no significant change (host-side moves are within run-to-run noise, or the runs' spread)."""
    for a, b in zip(training["base"], training["again"], strict=True):
        d = rocpd.diff(a, b)
        print(d.verdict())
        assert d.verdict().startswith("no significant change"), d.verdict()
        assert not d.changed, d.significant.to_string()
    d = rocpd.diff(training["base"], training["again"])
    print(d.text(top=5, units="ms"))
    assert d.base.runs == d.new.runs == 3
    assert d.verdict().startswith("no significant change"), d.verdict()
    assert not d.changed, d.significant.to_string()


def test_widened_layer_of_a_training_loop_is_named_first(training):
    d = rocpd.diff(training["base"][0], training["widened"])
    print(d.text(top=8, units="ms"))
    line = _line("# WIDENED_LAYER")
    top = d.items.iloc[0]
    assert top["line"].startswith(line) and top["kind"] == "kernel", d.items.head(5).to_string()
    assert bool(top["significant"]) and top["CiLowNs"] > 0 and top["verdict"] == "slower"
    assert f"first: {line}" in d.verdict()
    # the same with the three baseline runs
    d3 = rocpd.diff(training["base"], [training["widened"]])
    assert d3.items.iloc[0]["line"].startswith(line) and f"first: {line}" in d3.verdict()
