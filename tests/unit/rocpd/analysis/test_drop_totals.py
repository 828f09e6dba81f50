"""Issue 12 (6): the drop total is the writer's total row, not that row plus its breakdown
(a run that lost 40 records was summarised as "80 LOST")."""

import sqlite3

from rocpd import _schema, connect, stats
from rocpd.testing import DatabaseBuilder


def _db(path, **metadata):
    with DatabaseBuilder(path, pid=1) as b:
        b.marker("m", 1, 2)
        for tag, value in metadata.items():
            b.metadata(tag, value)
    return str(path)


def _older_writer(path):
    """The database as writers before the total row wrote it: per-cause rows only (today's
    writer always writes rocprof.dropped_records, 0 at open)."""
    c = sqlite3.connect(path)
    guid = c.execute("SELECT value FROM rocpd_metadata WHERE tag = 'guid'").fetchone()[0]
    c.execute(f'DELETE FROM "rocpd_metadata{_schema.suffix_of(guid)}"'
              " WHERE tag = 'rocprof.dropped_records'")
    c.commit()
    c.close()
    return path


def test_total_row_and_breakdown_are_not_added(tmp_path):
    db = _db(tmp_path / "a.db", **{"rocprof.dropped_records": 40, "rocprof.dropped_records.ring": 30,
                                   "rocprof.dropped_records.storage": 10})
    text = stats.format_summary(db)
    assert "Dropped records: 40 LOST" in text, text
    with connect(db) as c:
        assert c.dropped_total() == 40


def test_breakdown_alone_is_summed_and_parts_add_up(tmp_path):
    a = _older_writer(_db(tmp_path / "a.db", **{"rocprof.dropped_records.ring": 3,
                                                 "rocprof.dropped_records.x": 4}))
    b = _db(tmp_path / "b.db", **{"rocprof.dropped_records": 5, "rocprof.dropped_records.ring": 5})
    with connect(a, b) as c:
        assert c.dropped_total() == 12


def test_zero_is_none(tmp_path):
    db = _db(tmp_path / "a.db", **{"rocprof.dropped_records": 0, "rocprof.dropped_records.ring": 0})
    assert "Dropped records: none" in stats.format_summary(db)


def _caveats(db):
    from rocpd.analysis import analyze
    from rocpd.analysis.rules.caveats import caveats

    with connect(db) as c:
        return {f.rule: f for f in caveats(analyze(c))}


def test_missed_samples_are_told_apart_from_lost_records(tmp_path):
    """A missed timer tick is no lost trace record: its own finding, sized by the samples taken,
    a caveat only from 1 % of them; lost records keep theirs, and one record is 'was'."""
    few = _caveats(_db(tmp_path / "few.db", **{
        "rocprof.dropped_records": 1, "rocprof.dropped_records.sampling": 1,
        "rocprof.sampling.samples_taken": 6999}))
    assert "dropped-records" not in few
    f = few["missed-samples"]
    assert f.level == "info" and f.title.startswith("1 of 7,000 call-stack samples were not taken"), f
    assert "--sample HZ" in f.suggestion
    many = _caveats(_db(tmp_path / "many.db", **{
        "rocprof.dropped_records": 131, "rocprof.dropped_records.sampling": 130,
        "rocprof.dropped_records.ring": 1, "rocprof.sampling.samples_taken": 870}))
    assert many["missed-samples"].level == "caveat"
    assert many["dropped-records"].title.startswith("1 record was dropped while profiling"), many
