"""The writer puts the schema's views into sqlite_master as rows (cpp/storage/schema_views.cpp)
instead of running CREATE VIEW: the rows must be exactly those the DDL makes, and every view
must read."""

from __future__ import annotations

import sqlite3

from rocprof import _core
from support import ROOT, open_db

from rocpd import _schema


def test_the_views_are_the_rows_create_view_makes_and_each_reads(tmp_path):
    path = _core.start_session(str(tmp_path / "v_results.db"))
    _core.stop_session()
    db = open_db(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    meta = dict(db.execute("SELECT tag, value FROM rocpd_metadata"))
    schema = {part: (ROOT / "rocpd" / "schema" / f"{part}.sql").read_text()
              for part in ("table_views", "views")}
    ref = sqlite3.connect(":memory:")
    (pid,) = db.execute("SELECT pid FROM rocpd_info_process").fetchone()
    ref.executescript(_schema.render("tables.sql", meta["guid"], pid=pid))
    ref.executescript(schema["table_views"].replace("{{uuid}}", meta["uuid"]) + schema["views"])
    query = "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid"
    views = [row for row in db.execute(query) if row[0] == "view"]
    assert len(views) == 44  # ROCm's views, ours, and metric_samples (metrics over time)
    assert views == [row for row in ref.execute(query) if row[0] == "view"]
    for _type, name, *_ in views:
        db.execute(f'SELECT * FROM "{name}" LIMIT 1').fetchall()
