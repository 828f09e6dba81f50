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
