"""Jupyter views: a connection and a summary render as HTML; the summary prints as the CLI does."""

import rocpd
from rocpd.summary import stats


def test_summary_prints_as_the_command_and_shows_as_html(run_db):
    path, raw = run_db
    with rocpd.connect(path) as db:
        s = stats.summarize(db, top=2, units="us")
        assert str(s) == stats.format_summary(db, top=2, units="us")
        html = s._repr_html_()
        conn = db._repr_html_()
    assert set(s) >= {"kernel", "marker_api", "domain"}
    assert int(s["kernel"]["Calls"].sum()) == len(raw["kernels"])  # the whole table is kept
    assert "<h4>kernel stats (top 2 of 4)</h4>" in html and "TotalDurationUs" in html
    assert "Dropped records: 7 LOST" in html
    assert "rocpd connection" in conn and path in conn and "7 LOST" in conn


def test_connection_lists_many_paths_briefly(tmp_path, make_run):
    paths = []
    for i in range(10):
        paths.append(str(tmp_path / f"r{i}.db"))
        make_run(paths[-1], seed=i, n_kernels=5)
    with rocpd.connect(*paths) as db:
        html = db._repr_html_()
    assert html.count("<li><code>") == 8 and "and 2 more" in html
