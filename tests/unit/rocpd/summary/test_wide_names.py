"""A huge name must not blow up the console tables (every row was padded to the longest name);
CSV and JSON keep every name whole."""

import json

import pandas as pd
import pytest

from rocpd import textfmt
from rocpd.summary import stats
from rocpd.summary.stats import NAME_WIDTH
from rocpd.testing import DatabaseBuilder

HUGE = "huge_range_" + "a" * (1_000_000 - len("huge_range_") - 4) + "_end"
CLIPPED = HUGE[:40]  # the shown name starts with the name's own first characters
LIMIT = 200_000


@pytest.fixture(scope="module")
def wide_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("wide") / "wide.db"
    with DatabaseBuilder(path) as b:
        b.marker(HUGE, 1000, 900_000)
        for i in range(20):
            b.marker(f"step_{i}", 2000 + i * 100, 2050 + i * 100)
            b.kernel(f"kernel_{i}", 3000 + i * 100, 3040 + i * 100)
    assert len(HUGE) == 1_000_000
    return str(path)




def _shown(text):
    assert len(text) < LIMIT, len(text)
    assert CLIPPED in text and "a" * NAME_WIDTH not in text and "step_" in text  # the other rows too


def test_format_summary_clips_names(wide_db):
    _shown(stats.format_summary(wide_db))


def test_summary_cli_clips_console_but_csv_keeps_full_names(wide_db, tmp_path, cli):
    rc, out, err = cli("summary", wide_db, "--csv", tmp_path / "run")
    assert rc == 0, err
    _shown(out)
    df = pd.read_csv(tmp_path / "run_marker_api_stats.csv")
    assert HUGE in set(df["Name"]) and "step_7" in set(df["Name"])


@pytest.mark.parametrize("fmt", ["console", "markdown"])
def test_query_tables_clip(wide_db, cli, fmt):
    rc, out, err = cli("query", wide_db, "--sql", "SELECT string FROM rocpd_string", "--format", fmt)
    assert rc == 0, err
    _shown(out)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_query_csv_json_keep_full_names(wide_db, cli, tmp_path, fmt):
    out = tmp_path / f"q.{fmt}"
    rc, _, err = cli("query", wide_db, "--sql", "SELECT string FROM rocpd_string", "--format", fmt,
                     "-o", out)
    assert rc == 0, err
    rows = (json.load(open(out)) if fmt == "json" else pd.read_csv(out).to_dict("records"))
    assert HUGE in {r["string"] for r in rows}


def test_clip_name():
    assert textfmt.clip_name("short") == "short"
    s = "x" * NAME_WIDTH
    assert textfmt.clip_name(s) == s
    long = "head_" + "m" * 500 + "_tail"
    c = textfmt.clip_name(long)
    assert len(c) == NAME_WIDTH and c.startswith("head_") and c.endswith("_tail") and "..." in c


def test_compare_cli_clips(wide_db, cli):
    rc, out, err = cli("compare", wide_db, wide_db)
    assert rc == 0, err
    # Regions are named CATEGORY:name here, so the clipped name starts with the category.
    assert len(out) < LIMIT and "MARKER_CORE_API:huge_range_aaa" in out
    assert "a" * NAME_WIDTH not in out
