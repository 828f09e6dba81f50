"""Plots (figures checked against the raw rows) and the self-contained HTML report, rendered in
headless Chromium where it is installed."""

import base64
import os
import re
import shutil
import subprocess
import sys

import pytest

import rocpd

pytest.importorskip("matplotlib", reason="matplotlib is not installed")
from rocpd import plots  # noqa: E402


@pytest.fixture
def two_ranks(tmp_path, make_run):
    a = make_run(tmp_path / "a.db", seed=1, pid=11, rank=0)
    b = make_run(tmp_path / "b.db", seed=2, pid=12, rank=1, n_kernels=300)
    return [str(tmp_path / "a.db"), str(tmp_path / "b.db")], a, b


def _totals(rows):
    out = {}
    for name, s, e, *_ in rows:
        out[name] = out.get(name, 0) + (e - s)
    return out


def test_top_kernels_bars_match_raw(two_ranks):
    paths, a, b = two_ranks
    tot = _totals(a["kernels"] + b["kernels"])
    with rocpd.connect(*paths) as db:
        fig = plots.top_kernels(db, top=3)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [p.get_width() for p in ax.patches]
    expect = sorted(tot, key=tot.get, reverse=True)[:3]
    assert labels == expect
    assert widths == pytest.approx([tot[n] / 1e6 for n in expect])
    assert len(plots.png(fig)) > 1000


def test_timeline_and_imbalance_match_raw(two_ranks):
    paths, a, b = two_ranks
    with rocpd.connect(*paths) as db:
        rows, total = plots.timeline_rows(db)
        few, total2 = plots.timeline_rows(db, max_slices=10)
        fig = plots.gpu_timeline(db)
        imb = plots.imbalance_table(db)
        imb_fig = plots.rank_imbalance(db)
    n_gpu = len(a["kernels"]) + len(a["copies"]) + len(b["kernels"]) + len(b["copies"])
    assert total == total2 == len(rows) == n_gpu and len(few) == 10
    assert [r[1] for r in few] == sorted(r[1] for r in rows)[:10]
    stream1 = [r for r in rows if r[0] == "pid 12 · GPU 0 · Stream 1"]
    assert len(stream1) == len(b["kernels"]) // 2
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == sorted({r[0] for r in rows})
    assert sum(len(c.get_paths()) for c in ax.collections) == n_gpu
    ka, kb = (sum(e - s for _, s, e, _ in x["kernels"]) for x in (a, b))
    assert list(imb["Who"]) == ["rank 0", "rank 1"]
    assert list(imb["KernelTimeNs"]) == [ka, kb]
    mean = (ka + kb) / 2
    assert list(imb["VsMeanPercent"]) == pytest.approx([100 * (ka - mean) / mean, 100 * (kb - mean) / mean])
    assert [p.get_height() for p in imb_fig.axes[0].patches] == pytest.approx([ka / 1e6, kb / 1e6])


def _non_white_fraction(png_path):
    import matplotlib.image as mpimg

    img = mpimg.imread(png_path)[..., :3]
    return float((img.min(axis=2) < 0.9).mean())


def test_report_html_is_self_contained_and_renders(two_ranks, tmp_path):
    paths, a, b = two_ranks
    out = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "rocpd", "report", *paths, "-o", str(out)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert not re.search(r"https?:|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I)
    srcs = re.findall(r'src="([^"]*)"', text)
    assert len(srcs) == 3 and all(s.startswith("data:image/png;base64,") for s in srcs)
    for s in srcs:
        assert base64.b64decode(s.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<link" not in text and "<script" not in text
    for name in ("KERNEL_STATS", "MARKER_API_STATS", "gemm_fp16", "rank 1", "GPU busy"):
        assert name in text
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        pytest.skip("no chromium on this machine: the HTML was checked, the rendering was not")
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1200,2000", out.as_uri()], capture_output=True, timeout=120)
    assert shot.exists(), "chromium wrote no screenshot"
    frac = _non_white_fraction(shot)
    assert frac > 0.05, f"screenshot nearly blank ({frac:.1%} non-white)"
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    shot2 = tmp_path / "blank.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot2}",
                    "--window-size=1200,2000", blank.as_uri()], capture_output=True, timeout=120)
    assert _non_white_fraction(shot2) < 0.01  # the measure itself can tell a blank page


def test_report_on_empty_gpu_database(tmp_path):
    from rocpd import report
    from rocpd.testing import DatabaseBuilder

    with DatabaseBuilder(tmp_path / "m.db") as bld:
        bld.marker("only", 10, 20)
    with rocpd.connect(str(tmp_path / "m.db")) as db:
        text = report.build(db)
    assert "data:image/png" not in text  # nothing to draw: no kernels, no GPU, one process
    assert "No kernel dispatches recorded." in text and "No GPU activity recorded." in text
    assert "MARKER_API_STATS" in text and "KERNEL_STATS" not in text
