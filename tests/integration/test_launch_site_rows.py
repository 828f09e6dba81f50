"""A Python launch site is stored once, as rocpd_event rows (category PYTHON_LAUNCH_SITE), never
as a rocpd_string row: a site's JSON runs to kilobytes (the whole stack, the library frames inside
the site), and rocpd_string's unique index would hold it a second time, past the 1 kB an index
entry keeps in its page (a 4 KiB overflow page each). The frames outward of the site, the same for
most sites of a program, are one row for all of them. Readers (the regions/samples views,
rocpd._schema.call_stack_sql/line_info_sql) give back exactly the JSON list and its first frame,
as they did when the list was a string, and still read databases written that way; ROCm's views
read every row. Real SQLite files written by the C++ writer (rocpd.testing.DatabaseBuilder)."""

from __future__ import annotations

import json
import re
import sqlite3

from rocm_views import mismatches

from rocpd import _schema
from rocpd.testing import DatabaseBuilder

DUMP = {"separators": (",", ":")}
CALLERS = [{"file": "/srv/job/train.py", "line": 88, "function": "main"},
           {"file": "/usr/lib/python3.12/runpy.py", "line": 88, "function": "_run_code", "library": True}]
LIB = [{"file": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "line": 125,
        "function": "Linear.forward", "library": True}]
SITES = [
    [{"file": "/srv/job/model.py", "line": 12, "function": "forward", "library_frames": LIB}, *CALLERS],
    [{"file": "/srv/job/model.py", "line": 12, "function": "forward", "backward_of": "aten::addmm",
      "library_frames": LIB}, *CALLERS],
    [{"file": "/srv/job/model.py", "line": 30, "function": "step"}, *CALLERS],
    [{"file": "/srv/job/solo.py", "line": 1, "function": "<module>"}],  # no callers
]
TEXTS = [json.dumps(s, **DUMP) for s in SITES]


def _write(path, sites=TEXTS):
    with DatabaseBuilder(path) as b:
        t = 1_000_000
        for i in range(40):
            site = sites[i % len(sites)]
            corr = b.next_correlation()
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t, t + 500, correlation_id=corr, site=site)
            b.kernel("gemm", t + 1000, t + 3000, correlation_id=corr, site=site)
            t += 10_000
    return path


def _read(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    kernels = con.execute(f"SELECT {_schema.line_info_sql('E')}, {_schema.call_stack_sql('E')} "
                          "FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id "
                          "ORDER BY K.start").fetchall()
    regions = con.execute("SELECT line_info, call_stack FROM regions ORDER BY start").fetchall()
    con.close()
    return kernels, regions


def test_a_site_is_no_string_and_its_callers_are_one_row(tmp_path):
    db = _write(tmp_path / "sites.db")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM rocpd_string WHERE string LIKE '%\"file\"%'").fetchone() == (0,)
    assert max(len(s) for (s,) in con.execute("SELECT string FROM rocpd_string")) < 40
    nodes = con.execute("SELECT E.id, E.stack_id, E.parent_stack_id, E.call_stack FROM rocpd_event E "
                        "JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid "
                        "WHERE C.string = 'PYTHON_LAUNCH_SITE' ORDER BY E.id").fetchall()
    callers = json.dumps(CALLERS, **DUMP)
    assert [n[3] for n in nodes if n[3] == callers] == [callers]  # once, for three sites
    assert len(nodes) == len(SITES) + 1
    by_id = {n[0]: n for n in nodes}
    for nid, stack_id, parent, text in nodes:
        assert stack_id == nid and (parent == 0 or by_id[parent][3] == callers)
        assert json.loads(text)  # each row's call_stack is a JSON list
    refs = {r for (r,) in con.execute("SELECT call_stack FROM rocpd_event WHERE call_stack LIKE '{\"site\":%'")}
    assert {json.loads(r)["site"] for r in refs} == {n[0] for n in nodes if n[3] != callers}
    con.close()


def test_readers_give_back_the_list_and_its_first_frame_exactly(tmp_path):
    kernels, regions = _read(_write(tmp_path / "sites.db"))
    want = [(json.dumps(SITES[i % 4][0], **DUMP), TEXTS[i % 4]) for i in range(40)]
    assert kernels == want
    assert regions == want


def _as_strings(path):
    """The same database as the writer stored sites before: each site's whole list a
    rocpd_string row, {"site": <its string id>}, no PYTHON_LAUNCH_SITE rows."""
    con = sqlite3.connect(path)
    sfx = _schema.suffix_of(con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'guid'").fetchone()[0])
    full = dict(con.execute(f"SELECT DISTINCT E.call_stack, {_schema.call_stack_sql('E')} FROM "
                            "rocpd_event E WHERE E.call_stack LIKE '{\"site\":%'"))
    for ref, text in full.items():
        sid = con.execute(f'INSERT INTO "rocpd_string{sfx}"(string) VALUES (?)', (text,)).lastrowid
        con.execute(f'UPDATE "rocpd_event{sfx}" SET call_stack = ? WHERE call_stack = ?',
                    (json.dumps({"site": sid}, **DUMP), ref))
    con.execute(f'DELETE FROM "rocpd_event{sfx}" WHERE category_id = (SELECT id FROM '
                f'"rocpd_string{sfx}" WHERE string = \'PYTHON_LAUNCH_SITE\')')
    con.commit()
    con.close()
    return path


def test_databases_with_sites_as_strings_read_the_same(tmp_path):
    new = _read(_write(tmp_path / "new.db"))
    old_db = _as_strings(_write(tmp_path / "old.db"))
    con = sqlite3.connect(old_db)
    assert con.execute("SELECT count(*) FROM rocpd_string WHERE string LIKE '[{\"file\"%'").fetchone() == (4,)
    con.close()
    assert _read(old_db) == new


def test_rocm_views_read_every_row_of_a_database_with_sites(tmp_path):
    assert mismatches(_write(tmp_path / "sites.db")) == {}


def test_a_sites_recorded_text_is_redacted_as_strings_are(tmp_path):
    secret = "https://ci:s3cr3tpassw0rd@git.example.com/job.py"
    site = json.dumps([{"file": secret, "line": 3, "function": "f"}, *CALLERS], **DUMP)
    kernels, _ = _read(_write(tmp_path / "s.db", sites=[site]))
    assert "s3cr3tpassw0rd" not in kernels[0][1] and "<redacted>" in kernels[0][1]
    con = sqlite3.connect(f"file:{tmp_path / 's.db'}?mode=ro", uri=True)
    assert json.loads(dict(con.execute("SELECT tag, value FROM rocpd_metadata"))["rocprof.redacted"])["text"] >= 1
    con.close()


def test_the_views_use_the_one_launch_site_sql():
    """views.sql (stored in each database, no Python there) spells the site SQL of
    rocpd._schema, whitespace aside: one layout, one reader."""
    views = re.sub(r"\s+", "", _schema.read("views.sql"))
    for sql in (_schema.call_stack_sql("E"), _schema.line_info_sql("E")):
        assert views.count(re.sub(r"\s+", "", sql)) == 2  # regions and samples
