"""ROCm's own rocpd package (query, summary, convert -f csv, views, read_*) over databases rocprof
writes and over a ROCm-shaped one, compared cell by cell with ours answering the same command."""

from __future__ import annotations

import json
import os

import pytest
import support
from tables import assert_same_table, read_csv

import rocpd
from rocpd.cli import main as our_rocpd

KINDS = ["fixture", "cpu", "standin", "rocm", "scratch", "metrics"]
# ROCm's views, each compared on ROCm's columns (ours may add columns after them).
VIEWS = ["regions", "samples", "sample_regions", "regions_and_samples", "kernels", "memory_copies",
         "memory_allocations", "scratch_memory", "processes", "threads", "code_objects",
         "kernel_symbols", "pmc_info", "pmc_events", "counters_collection", "events_args",
         "stream_args", "region_args", "top_kernels", "top", "busy"]


@pytest.fixture(params=KINDS)
def db(request):
    if request.param == "rocm":
        return request.getfixturevalue("rocm_db")[0]
    if request.param in ("standin", "scratch", "metrics"):
        return request.getfixturevalue(f"{request.param}_db")
    return request.getfixturevalue("our_dbs")[request.param]


def _ours(*args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        assert our_rocpd([str(a) for a in args]) == 0
    finally:
        os.chdir(old)


_VIEW_ROWS = """
import sys
import rocm_rocpd
data = rocm_rocpd.connect([sys.argv[1]])
result = {}
for v in sys.argv[2:]:
    cur = data.execute(f"SELECT * FROM {v}")
    result[v] = [[d[0] for d in cur.description], [list(r) for r in cur.fetchall()]]
"""


SITE = "<a launch site>"


def _launch_sites_alike(db, cols, rows, ours: bool) -> list[list]:
    """One known difference, normalised before comparing: where a row's event points at a Python
    launch site (rocpd_event.call_stack {"site": id}), ROCm's views show that pointer and ours the
    frames it points at and their first frame (rocpd._schema; checked exactly by
    tests/integration/test_launch_site_rows.py). Both columns read as one mark there."""
    if "call_stack" not in cols or "event_id" not in cols:
        return [list(r) for r in rows]
    cs, li, ev = cols.index("call_stack"), cols.index("line_info"), cols.index("event_id")
    gu = cols.index("guid") if "guid" in cols else None
    with support.open_db(db) as con:
        refs = {(g if gu is not None else None, i) for g, i in con.execute(
            "SELECT guid, id FROM rocpd_event WHERE call_stack LIKE '{\"site\":%'")}
    out = []
    for r in map(list, rows):
        if (r[gu] if gu is not None else None, r[ev]) in refs:
            assert (r[cs].startswith("[{") and r[li].startswith("{")) if ours else \
                (r[cs].startswith('{"site":') and r[li] == "{}"), r
            r[cs] = r[li] = SITE
        out.append(r)
    return out


def test_views_equal_rocm_views(rocm, db):
    theirs = rocm.python(_VIEW_ROWS, db, *VIEWS)
    with rocpd.connect(db) as ours:
        for view in VIEWS:
            cur = ours.execute(f"SELECT * FROM {view}")
            cols = [d[0] for d in cur.description]
            tcols, trows = theirs[view]
            assert cols[:len(tcols)] == tcols, f"{view}: ours {cols}, ROCm's {tcols}"
            mine = _launch_sites_alike(db, tcols, [r[:len(tcols)] for r in cur.fetchall()], True)
            assert sorted(map(json.dumps, mine)) == \
                sorted(map(json.dumps, _launch_sites_alike(db, tcols, trows, False))), view


QUERIES = ["SELECT * FROM top_kernels", "SELECT * FROM top",
           "SELECT category, name, count(*) AS n, sum(duration) AS total FROM regions_and_samples"
           " GROUP BY category, name",
           "SELECT name, stack_id, start, duration FROM kernels"]


@pytest.mark.parametrize("query", QUERIES)
def test_query_csv_as_rocm(rocm, db, query, tmp_path):
    rocm.cli("query", "-i", db, "--query", query, "--format", "csv", "-d", "rocm", "-o", "q",
             cwd=tmp_path)
    _ours("query", "-i", db, "--query", query, "--format", "csv", "-d", "ours", "-o", "q",
          cwd=tmp_path)
    theirs, ours = tmp_path / "rocm" / "q.csv", tmp_path / "ours" / "q.csv"
    assert ours.exists() == theirs.exists()  # no rows: no file, in both
    if not theirs.exists():
        return
    assert_same_table(read_csv(ours), read_csv(theirs), query)
    assert ours.read_text().splitlines()[0] == theirs.read_text().splitlines()[0]  # df.to_csv


def test_summary_as_rocm(rocm, db, tmp_path):
    args = ("summary", "-i", db, "--domain-summary", "--summary-by-rank", "--format", "csv",
            "-d")
    rocm.cli(*args, "rocm", cwd=tmp_path)
    _ours(*args, "ours", cwd=tmp_path)
    theirs = sorted(os.listdir(tmp_path / "rocm"))
    assert sorted(os.listdir(tmp_path / "ours")) == theirs  # kernels_summary.csv ...
    assert "markers_summary.csv" in theirs
    for name in theirs:
        assert_same_table(read_csv(tmp_path / "ours" / name), read_csv(tmp_path / "rocm" / name),
                          name)


def _rocm_quirks(db, name, header, rows):
    """Two known differences, normalised before comparing. ROCm's csv.cpp writes a freed
    allocation's Agent_Id as four quotes (a quoted quote, read back as one quote character);
    ours is empty. It prints the stored queue id as Queue_Id; we print what rocprofv3 prints, the
    runtime's queue id (hsa_queue_t::id), which our HSA capture keeps in the queue's extdata
    (ROCm's writer stores that id itself: there both are the same)."""
    if name.endswith("memory_allocation_trace.csv"):
        i = header.index("Agent_Id")
        for r in rows:
            if r[i] == '"':
                r[i] = ""
    if "Queue_Id" in header:
        with support.open_db(db) as con:
            handle = {str(q): str(h) for q, h in con.execute(
                "SELECT id, json_extract(extdata, '$.hsa_queue_id') FROM rocpd_info_queue"
                " WHERE json_valid(extdata) AND json_extract(extdata, '$.hsa_queue_id') IS NOT NULL")}
        i = header.index("Queue_Id")
        for r in rows:
            r[i] = handle.get(r[i], r[i])
    return header, rows


def test_convert_csv_as_rocm(rocm, db, tmp_path):
    rocm.cli("convert", "-i", db, "-f", "csv", "-d", "rocm", "-o", "out", cwd=tmp_path)
    _ours("convert", "-i", db, "-f", "csv", "-d", "ours", "-o", "out", cwd=tmp_path)
    theirs = sorted(os.listdir(tmp_path / "rocm"))
    assert {"out_kernel_trace.csv", "out_marker_api_trace.csv"} & set(theirs)
    for name in theirs:
        if name == "out_agent_info.csv" and not db.endswith("4242_results.db"):
            continue  # ROCm reads these columns from its own agent JSON, which ours do not hold
        assert (tmp_path / "ours" / name).exists(), f"ours lacks {name}"
        assert_same_table(read_csv(tmp_path / "ours" / name),
                          _rocm_quirks(db, name, *read_csv(tmp_path / "rocm" / name)), name)


_READ = """
import sys
import rocm_rocpd
data = rocm_rocpd.connect([sys.argv[1]])
result = {}
for fn in ("read_nodes", "read_processes", "read_threads", "read_agents"):
    result[fn] = [{k: v for k, v in vars(o).items() if not k.startswith("_")}
                  for o in getattr(rocm_rocpd, fn)(data)]
"""


def test_read_functions_return_objects_as_rocm(rocm, rocm_db):
    theirs = rocm.python(_READ, rocm_db[0])
    with rocpd.connect(rocm_db[0]) as db:
        for fn, objects in theirs.items():
            ours = getattr(rocpd, fn)(db)
            assert len(ours) == len(objects), fn
            for mine, their in zip(ours, objects, strict=True):
                for attr, value in their.items():
                    assert getattr(mine, attr) == value, (fn, attr)
    assert [t.name for t in rocpd.read_threads(rocm_db[0])] == ["Thread 4242 [main]"]
