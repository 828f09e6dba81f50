"""`rocpd diff A B` (text, csv/json, an HTML or Markdown page) and `rocpd report B --baseline A`:
the planted slower kernel named first, the median steps side by side with the changed kernel
outlined, both timelines of one page drawn (headless Chromium, where installed)."""

import base64
import json
import re
import shutil
import subprocess

import diff_pairs
import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return diff_pairs.pair(tmp_path_factory.mktemp("cli"), "slow", slow={"gemm_out": 1.3})


def _data(text, prefix):
    m = re.search(rf"<script type='application/json' id='{prefix}-data'>(.*?)</script>", text, re.S)
    assert m, f"no {prefix}-data in the page"
    return json.loads(m.group(1).replace("<\\/", "</"))


def _array(data, key, dtype):
    return np.frombuffer(base64.b64decode(data[key]), dtype=dtype)


def test_text_names_the_line_first(pair, cli):
    rc, out, err = cli("diff", *pair, "--top", "3", "--units", "ms")
    assert rc == 0, err
    verdict = next(ln for ln in out.splitlines() if ln.startswith("verdict:"))
    assert "verdict: 1 significant change; first: model.py:23 kernel" in verdict
    assert "ms per step [+0.07" in verdict  # +75 µs, its interval in ms
    changes = out.split("== CHANGES, REGRESSIONS FIRST (line, kind, kernel) ==\n")[1].splitlines()
    assert changes[1].split()[0] == "model.py:23" and changes[1].rstrip().endswith("slower")
    assert "... and 10 more (use --top 0)" in out


def test_header_states_the_floors(pair, cli):
    """The floors a change must pass, as shares and in time per baseline step."""
    rc, out, err = cli("diff", *pair, "--min-idle", "0.2", "--min-share", "0.01")
    assert rc == 0, err
    rule = next(ln for ln in out.splitlines() if ln.startswith("per step: GPU work (and the rest"
                                                               " of the step) the mean over the"
                                                               " steps, GPU idle a 20% trimmed mean"))
    step = float(next(ln for ln in out.splitlines() if ln.strip().startswith("step time")).split()[2]
                 .replace(",", ""))
    work = re.search(r">= 5% of the time and >= 1\.0% of a baseline step \(([\d.,]+) us\)", rule)
    idle = re.search(r"a change that is mostly GPU idle \(the host's pace\) >= 20\.0% of a baseline"
                     r" step \(([\d.,]+) us\)", rule)
    assert work and idle, rule
    assert float(work.group(1).replace(",", "")) == pytest.approx(0.01 * step, abs=0.01)
    assert float(idle.group(1).replace(",", "")) == pytest.approx(0.2 * step, abs=0.01)


def test_csv_and_json_tables(pair, cli, tmp_path):
    rc, out, err = cli("diff", *pair, "--format", "csv", "-o", tmp_path / "d")
    assert rc == 0, err
    items = pd.read_csv(tmp_path / "d_items.csv")
    assert items.loc[0, "line"] == "model.py:23" and items.loc[0, "CiLowNs"] > 0
    assert {"d_summary.csv", "d_lines.csv", "d_kernels.csv", "d_phases.csv"} <= \
        {p.name for p in tmp_path.iterdir()}
    assert "d_appeared.csv" not in out  # an empty table is not written
    rc, out, err = cli("diff", *pair, "--format", "json", "-o", tmp_path / "j")
    assert rc == 0, err
    assert json.loads((tmp_path / "j_lines.json").read_text())[0]["line"] == "model.py:23"


@pytest.mark.parametrize("args, message", [
    (["--format", "html"], "needs -o"),
    (["-o", "out.txt"], "give --format"),
    (["--format", "csv", "-o", "/nonexistent/folder/x"], "does not exist"),
    (["--confidence", "2"], "confidence 2.0"),
    (["--min-idle", "-0.1"], "min_idle must not be negative"),
])
def test_bad_options_are_one_line_errors(pair, cli, args, message):
    rc, out, err = cli("diff", *pair, *args)
    assert rc == 1 and message in err and len(err.strip().splitlines()) == 1, err


def test_missing_run_is_one_line_error(pair, cli, tmp_path):
    rc, out, err = cli("diff", tmp_path / "nope.db", pair[1])
    assert rc == 1 and "nope.db" in err and len(err.strip().splitlines()) == 1


def test_html_page_shows_the_median_steps_side_by_side(pair, cli, tmp_path):
    rc, out, err = cli("diff", *pair, "-o", tmp_path / "d.html")
    assert rc == 0, err
    text = (tmp_path / "d.html").read_text()
    assert not re.search(r"<script[^>]*\bsrc=", text) and not re.search(r"<link\b", text)
    assert "<section id='diff'>" in text and "<section id='diff-timeline'>" in text
    data = _data(text, "tld")
    labels = [g["label"] for g in data["groups"]]
    assert labels[0].startswith("A (baseline) · pid 1000 · step") and "(median" in labels[0]
    assert labels[1].startswith("B (new) · pid 1000 · step")
    names = data["names"]
    name, mark, track = (_array(data, "name", np.int32), _array(data, "mark", np.uint8),
                         _array(data, "track", np.int32))
    start = _array(data, "start", np.float64)
    assert start.min() >= 0  # from each step's start
    marked = {names[i] for i in name[mark == 1]}
    assert len(marked) == 1 and next(iter(marked)).endswith("gemm_out")
    groups = {data["tracks"][t]["group"] for t in track[mark == 1]}
    assert groups == {0, 1}  # the slower kernel outlined in both runs' median step
    assert data["axis"] == "time from the step's start"


def test_markdown_page(pair, cli, tmp_path):
    rc, out, err = cli("diff", *pair, "-o", tmp_path / "d.md")
    assert rc == 0, err
    text = (tmp_path / "d.md").read_text()
    assert "## Changes against the baseline" in text and "Verdict: 1 significant change" in text
    assert "| model.py:23 | kernel |" in text
    assert "tld-data" not in text  # the timeline is the HTML page's


def test_report_with_a_baseline(pair, cli, tmp_path):
    a, b = pair
    rc, out, err = cli("report", b, "--baseline", a, "-o", tmp_path / "r.html", "--no-perfetto")
    assert rc == 0, err
    text = (tmp_path / "r.html").read_text()
    assert "<section id='findings'>" in text and "<section id='diff'>" in text
    assert _data(text, "tl")["n"] > 0 and _data(text, "tld")["marked"] == 2
    rc, out, err = cli("report", b, "-o", tmp_path / "plain.html", "--no-perfetto")
    assert "<section id='diff" not in (tmp_path / "plain.html").read_text()


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.slow
def test_both_timelines_of_a_page_are_drawn_in_chromium(pair, cli, tmp_path):
    """The report's timeline and the diff's side-by-side one run on one page (each draws its
    slices); the changed kernel is outlined in the diff's red."""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no chromium on this machine (make system-deps installs it): the HTML was "
                    "checked, the rendering was not")
    a, b = pair
    page = tmp_path / "r.html"
    rc, out, err = cli("report", b, "--baseline", a, "-o", page, "--no-perfetto")
    assert rc == 0, err
    run = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,6000",
           "--virtual-time-budget=20000", "--hide-scrollbars"]
    dom = subprocess.run([*run, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=300).stdout
    drawn = dict(re.findall(r'id="(tld?-canvas)"[^>]*data-drawn="(\d+)"', dom))
    assert int(drawn.get("tl-canvas", 0)) > 0 and int(drawn.get("tld-canvas", 0)) > 0, drawn
    shot = tmp_path / "r.png"
    subprocess.run([*run, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=300)
    import matplotlib.image as mpimg

    img = (mpimg.imread(shot)[..., :3] * 255).astype(int)
    red = (img[..., 0] > 200) & (img[..., 1] < 30) & (img[..., 2] < 30)  # #e00000 outlines
    assert red.sum() > 20, "no changed-work outline drawn"
