"""The report over a streamed analysis (a process too big to hold swept in chunks, its timeline
drawn from each stream's first ops) against the report over the held one, on the same real
databases: the page equal once the plots' random ids and the generation time are masked, under
a small slice budget too, and the Markdown report's timeline PNG byte for byte."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import rocpd
import rocpd.report as report
from rocpd.analysis import analyze, chunks
from rocpd.plots import png
from rocpd.report import figures

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from test_bounded_load import _training  # noqa: E402


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("report_streamed")
    return (_training(d / "rank0.db", 4000, 1), _training(d / "rank1.db", 4100, 2, shuffle=True))


def _page(paths, fmt="html", **kw):
    with rocpd.connect(*paths) as db:
        text = report.build(db, format=fmt, **kw)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", text)
    text = re.sub(r"<th>generated</th><td>[^<]*</td>", "", text)
    return re.sub(r"\*\*generated\*\*: [^\n]*", "", text)  # the minute may turn between pages


@pytest.mark.parametrize("kw", [{}, {"max_slices": 10}, {"step": ""}, {"pid": 4100}])
@pytest.mark.parametrize("fmt", ["html", "md"])
def test_report_of_a_swept_run_is_the_held_one(runs, monkeypatch, kw, fmt):
    monkeypatch.setattr(chunks, "CHUNK", 3)
    held = _page(runs, fmt, **kw)
    monkeypatch.setattr(report, "STREAM_ABOVE", 0)
    swept = _page(runs, fmt, **kw)
    assert "GPU" in held and swept == held


@pytest.mark.parametrize("max_slices", [5, 50_000])
def test_timeline_figure_from_the_streams_first_ops(runs, monkeypatch, max_slices):
    monkeypatch.setattr(chunks, "CHUNK", 7)
    with rocpd.connect(*runs) as db:
        held = png(figures.timeline(analyze(db), max_slices=max_slices))
        a = analyze(db, stream_above=0, head=max_slices)
        assert all(p.stream is not None for p in a.processes)
        assert png(figures.timeline(a, max_slices=max_slices)) == held
