"""A database written the way ROCm's writer writes one (rocm_writer.py) through every export and
subcommand of ours: links (API call -> kernel/copy through stack_id), counts and totals equal what
ROCm's own SQL gives; ROCTx marks, allocations and counters present in every trace. Perfetto is
read with perfetto's own protos, OTF2 with the otf2 reader, Chrome JSON as the trace-event format
defines it. The same trace checks run on a database our writer wrote."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
import support

import rocpd
from rocpd.cli import main as our_rocpd

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the 'perfetto' package is not installed")
otf2 = pytest.importorskip("otf2", reason="the 'otf2' package is not installed")


def _rocm_links(path) -> Counter:
    """(API function, GPU op name) of every link, from ROCm's own data views over the database."""
    from rocm_views import connect_with_rocm_views

    con = connect_with_rocm_views(path)
    try:
        return Counter(con.execute(
            "SELECT R.name, K.name FROM temp.regions R JOIN temp.kernels K ON K.stack_id ="
            " R.stack_id AND K.guid = R.guid UNION ALL SELECT R.name, M.name FROM temp.regions R"
            " JOIN temp.memory_copies M ON M.stack_id = R.stack_id AND M.guid = R.guid"
        ).fetchall())
    finally:
        con.close()


@pytest.fixture(params=["rocm", "ours"])
def traced(request):
    """(database, its expected marks and link pairs), for a ROCm-shaped database and ours."""
    if request.param == "rocm":
        path, expect = request.getfixturevalue("rocm_db")
        marks = {f"iter {i}" for i in range(10)}
    else:
        path = request.getfixturevalue("our_dbs")["fixture"]
        marks = {"epoch 0", "epoch 1", "epoch 2", "epoch 3", "saved"}
    return path, marks, _rocm_links(path)


def test_rocm_sql_sees_every_link(rocm_db):
    links = _rocm_links(rocm_db[0])
    expect = rocm_db[1]
    assert sum(links.values()) == len(expect["launches"]) + len(expect["copies"])
    assert links[("hipLaunchKernel", "vector_add")] == 5


# -- Perfetto -------------------------------------------------------------------------------------
def _perfetto(db, out):
    from rocpd.export import perfetto

    with rocpd.connect(db) as c:
        perfetto.write(c, str(out))
    trace = pb.Trace()
    trace.ParseFromString(out.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    events = [(p.timestamp, p.track_event) for p in trace.packet if p.HasField("track_event")]
    return tracks, events


def test_perfetto_flows_follow_stack_id(traced, tmp_path):
    db, _marks, links = traced
    _tracks, events = _perfetto(db, tmp_path / "t.pftrace")
    begins = [e for _, e in events if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN]
    out = Counter(f for e in begins for f in e.flow_ids)
    inn = Counter(f for e in begins for f in e.terminating_flow_ids)
    assert set(out.values()) == {1} and set(inn.values()) == {1} and set(out) == set(inn)
    src = {f: e.name for e in begins for f in e.flow_ids}
    dst = {f: e.name for e in begins for f in e.terminating_flow_ids}
    assert Counter((src[f], dst[f]) for f in src) == links


def test_perfetto_marks_allocations_and_counters(traced, tmp_path):
    db, marks, _links = traced
    tracks, events = _perfetto(db, tmp_path / "t.pftrace")
    instants = [e for _, e in events if e.type == pb.TrackEvent.TYPE_INSTANT
                and e.categories[0].startswith("MARKER")]  # not the call-stack samples
    assert sorted(e.name for e in instants) == sorted(marks)
    assert all(tracks[e.track_uuid].HasField("thread") for e in instants)
    values = {}
    for ts, e in events:
        if e.type == pb.TrackEvent.TYPE_COUNTER:
            values.setdefault(tracks[e.track_uuid].name, []).append((ts, e.double_counter_value))
    alloc = values.pop("Allocated bytes (GPU 0)")
    assert max(v for _, v in alloc) > 0 and alloc[-1][1] == 0  # allocated, then freed
    pmc = {name for name in values if name.startswith("PMC ")}
    with rocpd.connect(db) as c:
        names = {n for (n,) in c.execute("SELECT DISTINCT counter_name FROM counters_collection")}
        n = c.execute("SELECT count(*) FROM counters_collection").fetchone()[0]
    assert pmc == {f"PMC {x}" for x in names} and names
    assert sum(len(values[p]) for p in pmc) == 2 * n  # its value while each dispatch runs


def test_perfetto_d2h_copy_drawn_under_its_gpu(rocm_db, tmp_path):
    tracks, events = _perfetto(rocm_db[0], tmp_path / "t.pftrace")
    gpus = {u: t.name for u, t in tracks.items() if t.name.startswith(("GPU", "CPU"))}
    assert sorted(gpus.values()) == ["GPU 0 (AMD Instinct MI210)"]  # node 1; node 0 is the CPU
    copies = [e for _, e in events if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN
              and e.name.startswith("MEMORY_COPY")]
    assert len(copies) == 2
    assert all(tracks[tracks[e.track_uuid].parent_uuid].name.startswith("GPU 0") for e in copies)


# -- Chrome JSON ----------------------------------------------------------------------------------
def _chrome(db, out):
    from rocpd.export import chrome

    with rocpd.connect(db) as c:
        chrome.write(c, str(out))
    return json.loads(out.read_text())["traceEvents"]


# The trace-event format's required fields per phase (X complete, i instant, s/f flow, C counter,
# M metadata); timestamps in microseconds.
_FIELDS = {"X": {"name", "ph", "ts", "dur", "pid", "tid"}, "i": {"name", "ph", "ts", "pid", "tid", "s"},
           "s": {"name", "ph", "ts", "pid", "tid", "id"}, "f": {"name", "ph", "ts", "pid", "tid", "id"},
           "C": {"name", "ph", "ts", "pid", "args"}, "M": {"name", "ph", "pid", "args"}}


def test_chrome_flows_marks_threads_and_counters(traced, tmp_path):
    db, marks, links = traced
    ev = _chrome(db, tmp_path / "t.json")
    for e in ev:
        assert _FIELDS[e["ph"]] <= set(e), e
        assert e["ph"] != "i" or e["s"] in ("t", "p", "g")
    with rocpd.connect(db) as c:
        pids = {p for (p,) in c.execute("SELECT pid FROM rocpd_info_process")}
        threads = set(c.execute("SELECT pid, tid FROM rocpd_info_thread").fetchall())
    # The trace-event format: a flow is an "s" event and an "f" event with the same id, each
    # bound to the slice that encloses its timestamp on its pid/tid.
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    assert set(starts) == set(ends) and len(starts) == sum(links.values())
    assert {e["pid"] for e in [*starts.values(), *ends.values()]} == pids

    def enclosing(e):
        return next(x["name"] for x in ev if x["ph"] == "X" and x["pid"] == e["pid"]
                    and x["tid"] == e["tid"] and x["ts"] <= e["ts"] <= x["ts"] + x["dur"]
                    and x.get("cat") not in ("MARKER_CORE_API", "MARKER_CORE_RANGE_API"))

    assert Counter((enclosing(starts[i]), enclosing(ends[i])) for i in starts) == links
    instants = [e for e in ev if e["ph"] == "i" and e["cat"].startswith("MARKER")]
    assert sorted(e["name"] for e in instants) == sorted(marks)
    assert all(e["s"] == "t" and (e["pid"], e["tid"]) in threads for e in instants)
    named = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert threads <= named  # every CPU thread named, not only the GPU tracks
    counters = {e["name"] for e in ev if e["ph"] == "C"}
    assert "Allocated bytes (GPU 0)" in counters and any(n.startswith("PMC ") for n in counters)


# -- OTF2 -----------------------------------------------------------------------------------------
def _otf2(db, folder):
    from rocpd.export import otf2 as exporter

    with rocpd.connect(db) as c:
        anchor = exporter.write(c, str(folder))
    slices, stacks = [], {}
    with otf2.reader.open(anchor) as tr:
        names = [loc.name for loc in tr.definitions.locations]
        for loc, e in tr.events:
            st = stacks.setdefault(loc.name, [])
            if isinstance(e, otf2.events.Enter):
                st.append((e.region, e.time))
            elif isinstance(e, otf2.events.Leave):
                region, start = st.pop()
                assert region.name == e.region.name
                slices.append((loc.name, region, start, e.time))
    return names, slices


def test_otf2_marks_allocations_names_and_paradigms(traced, tmp_path):
    db, marks, _links = traced
    names, slices = _otf2(db, tmp_path / "arch")
    assert len(names) == len(set(names)), names
    mine = [s for s in slices if s[1].region_role == otf2.RegionRole.ARTIFICIAL]
    assert sorted(s[1].name for s in mine) == sorted(marks) and all(s[2] == s[3] for s in mine)
    roles = Counter(s[1].region_role for s in slices)
    assert roles[otf2.RegionRole.ALLOCATE] == 1 and roles[otf2.RegionRole.DEALLOCATE] == 1
    hsa = {s[1].paradigm for s in slices if s[1].description.startswith("HSA")}
    assert hsa in (set(), {otf2.Paradigm.HIP})  # OTF2 has no HSA paradigm: HIP's, as ROCm's


def test_otf2_rocm_database_paradigm_and_counts(rocm_db, tmp_path):
    names, slices = _otf2(rocm_db[0], tmp_path / "arch")
    kernels = [s for s in slices if s[1].region_role == otf2.RegionRole.KERNEL]
    assert len(kernels) == 10 and {s[1].paradigm for s in kernels} == {otf2.Paradigm.HIP}
    assert {s[1].paradigm for s in slices if s[1].name.startswith("hsa_")} == {otf2.Paradigm.HIP}
    copies = [s for s in slices if s[1].region_role == otf2.RegionRole.DATA_TRANSFER]
    assert len({s[0] for s in [*copies, *kernels]}) == 1  # one GPU stream, the D2H copy included


# -- every subcommand -----------------------------------------------------------------------------
def _run(*args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return our_rocpd([str(a) for a in args])
    finally:
        os.chdir(old)


def test_analysis_links_every_launch(rocm_db):
    from rocpd.analysis import activity

    with rocpd.connect(rocm_db[0]) as db:
        [p] = activity.load(db)
    assert p.has_api
    assert p.agents == {1: (0, "AMD Instinct MI210")}  # node 1 is GPU 0 (node 0 the CPU)
    kernels = p.gpu[p.gpu["op"] == "kernel"]
    assert list(kernels["launch_name"]) == ["hipLaunchKernel"] * 10
    copies = p.gpu[p.gpu["op"] == "copy"]
    assert list(copies["launch_name"]) == ["hipMemcpy"] * 2
    assert list(p.api.loc[p.api["blocking"] != "", "name"]) == ["hipMemcpy", "hipDeviceSynchronize"]


def test_every_subcommand_reads_a_rocm_database(rocm_db, tmp_path, capsys):
    db = rocm_db[0]
    assert _run("summary", db, "--all", cwd=tmp_path) == 0
    out = capsys.readouterr().out
    # rocprofv3's marker stats count marks (roctxMarkA, duration 0) with the ranges.
    markers = out.split("== MARKER_API_STATS ==")[1].split("==")[0]
    assert all(f"iter {i} " in markers for i in range(10)) and "teardown" in markers
    assert any(line.split()[:2] == ["MARKER_CORE_RANGE_API", "12"] for line in out.splitlines())
    assert _run("query", db, "--sql", "SELECT count(*) AS n FROM regions_and_samples"
                " WHERE category LIKE 'MARKER%'", cwd=tmp_path) == 0
    assert "12" in capsys.readouterr().out
    assert _run("analyze", db, cwd=tmp_path) == 0
    text = capsys.readouterr().out
    assert "no API calls recorded" not in text and "for 0 launches" not in text
    assert _run("report", db, "-o", tmp_path / "r.html", cwd=tmp_path) == 0
    html = (tmp_path / "r.html").read_text()
    assert "no API calls recorded" not in html
    assert _run("compare", db, db, cwd=tmp_path) == 0
    assert _run("merge", db, "-o", tmp_path / "m.db", cwd=tmp_path) == 0
    with rocpd.connect(str(tmp_path / "m.db")) as m:
        assert m.execute("SELECT count(*) FROM kernels").fetchone()[0] == 10
    for fmt in ("csv", "json", "pftrace", "otf2"):
        assert _run("convert", db, "-f", fmt, "-d", tmp_path / "conv", cwd=tmp_path) == 0, fmt
    conv = tmp_path / "conv"
    for sub in (("samples", db), ("ranks", db), ("plot", db, "-o", tmp_path / "p.png"),
                ("package", "-i", db, "-d", tmp_path / "pkg"), ("sol", db),
                ("convert", db, "-f", "collapsed", "-d", conv),  # no call-stack samples here
                ("convert", db, "-f", "flamegraph", "-d", conv)):
        rc = _run(*sub, cwd=tmp_path)
        assert rc in (0, 1), sub  # 1: says in one line why it has nothing to show
        if rc:
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("rocpd: error:"), (sub, err)
    capsys.readouterr()
    with support.open_db(db) as con:  # read-only: the database is left as ROCm wrote it
        assert con.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0] == 10


def test_marker_stats_count_marks_as_rocprofv3(our_dbs):
    """rocprofv3's marker_api_stats count roctxMarkA (duration 0) with the ranges; so do ours."""
    from rocpd.summary import stats

    with rocpd.connect(our_dbs["cpu"]) as db:
        tables = stats.collect(db)
        n = db.execute("SELECT count(*) FROM regions_and_samples WHERE category LIKE 'MARKER%'"
                       ).fetchone()[0]
    markers = tables["marker_api"].set_index("Name")
    assert markers.loc["done", "Calls"] == 1 and markers.loc["done", "TotalDurationNs"] == 0
    assert markers.loc["step", "Calls"] == 4 and markers["Calls"].sum() == n == 20
    domain = tables["domain"].set_index("Name")
    assert domain.loc["MARKER_CORE_API", "Calls"] == n
