"""A ROCTx range is shown by its message (event extdata) wherever rocpd names it: summaries,
CSV, timeline exports, --between and sample filters all use one SQL expression."""

import csv
import json
import pathlib
import re
import sqlite3

import pytest

import rocpd
from rocpd import _schema
from rocpd.testing import DatabaseBuilder


@pytest.fixture
def marker_db(tmp_path):
    """Ranges whose region name differs from their message, one with an empty message and one
    whose extdata is not JSON, plus an API call that has a message it must not be shown by."""
    path = tmp_path / "m.db"
    with DatabaseBuilder(path) as b:
        t = 1_000_000
        b.region("MARKER_CORE_API", "roctxRangePush", t, t + 1000, message="forward pass")
        b.region("MARKER_CORE_API", "named by region", t + 2000, t + 2500, message="")
        b.region("MARKER_CORE_API", "bad extdata", t + 3000, t + 3300, message="broken")
        b.region("HIP_RUNTIME_API", "hipMemcpy", t + 4000, t + 4100, message="not a marker")
        b.kernel("gemm", t + 100, t + 900)
        b.sample("python", t + 500, call_stack={"frames": ["main"]})
        guid = b.guid
    # The writer only stores JSON: break one event's extdata afterwards.
    with sqlite3.connect(path) as c:
        c.execute(f'UPDATE "rocpd_event{_schema.suffix_of(guid)}" SET extdata = \'{{"message": \' '
                  "WHERE extdata LIKE '%broken%'")
    c.close()
    return str(path)


SHOWN = {"forward pass", "named by region", "bad extdata", "hipMemcpy"}


def test_region_stats_and_csv_show_the_message(marker_db, tmp_path):
    with rocpd.connect(marker_db) as db:
        assert set(db.region_stats()["Name"]) == SHOWN
        from rocpd.export import csv as csv_export

        written = csv_export.write(db, str(tmp_path / "out" / "run"), stats=False)
    names = set()
    for p in written:
        if p.endswith("_api_trace.csv"):
            with open(p) as fh:
                names |= {row["Function"] for row in csv.DictReader(fh)}
    assert names == SHOWN


def test_chrome_export_shows_the_message(marker_db, tmp_path):
    from rocpd.export import chrome

    with rocpd.connect(marker_db) as db:
        out = chrome.write(db, str(tmp_path / "t.json"))
    events = json.loads(pathlib.Path(out).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    regions = {e["name"] for e in events if e.get("ph") == "X" and e.get("cat", "").endswith("_API")}
    assert regions == SHOWN


def test_between_and_sample_range_match_the_message(marker_db):
    with rocpd.connect(marker_db) as db:
        assert len(db.kernels(between=("forward pass", "forward pass"))) == 1
        from rocpd.summary import samples

        assert len(samples.sample_rows(db, roctx_range="forward pass")) == 1
        with pytest.raises(rocpd.RocpdError, match="no ROCTx range"):
            samples.sample_rows(db, roctx_range="not a marker")


def test_one_expression_for_the_message():
    root = pathlib.Path(rocpd.__file__).parent
    hits = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"\$\.message|json\.loads\(ext", line)]
    assert [h.split(":")[0] for h in hits] == ["_schema.py"], hits
    assert "json_extract" in _schema.roctx_message_sql() and "MARKER" in _schema.region_name_sql()
