"""Scratch memory (AMD): rows ROCm's writer stores in rocpd_memory_allocate at level 'SCRATCH',
which ROCm's package reads through its scratch_memory view: its scratch_memory_trace.csv, its
scratch_memory summary and SCRATCH_MEMORY domain (the scratch rows count in memory_allocations
too, so in both domains), compared with ours file by file, cell by cell."""

from __future__ import annotations

import json
import os

import pytest
from rocm_writer import with_scratch
from tables import assert_same_table, read_csv

import rocpd
from rocpd.cli import main as our_rocpd
from rocpd.summary import stats


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    return with_scratch(tmp_path_factory.mktemp("scratch") / "4343_results.db")


def _ours(*args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        assert our_rocpd([str(a) for a in args]) == 0
    finally:
        os.chdir(old)


@pytest.mark.parametrize("command", [("convert", "-f", "csv"),
                                     ("summary", "--domain-summary", "--summary-by-rank",
                                      "--format", "csv")])
def test_scratch_files_as_rocm(rocm, db, command, tmp_path):
    rocm.cli(command[0], "-i", db, *command[1:], "-d", "rocm", "-o", "out", cwd=tmp_path)
    _ours(command[0], "-i", db, *command[1:], "-d", "ours", "-o", "out", cwd=tmp_path)
    theirs = sorted(os.listdir(tmp_path / "rocm"))
    assert {"out_scratch_memory_trace.csv", "out_scratch_memory_summary.csv"} & set(theirs)
    for name in theirs:
        assert (tmp_path / "ours" / name).exists(), f"ours lacks {name}"
        header, rows = read_csv(tmp_path / "rocm" / name)
        if "Agent_Id" in header:  # ROCm's csv.cpp writes a free's agent as a quoted quote
            i = header.index("Agent_Id")
            rows = [[*r[:i], "" if r[i] == '"' else r[i], *r[i + 1:]] for r in rows]
        assert_same_table(read_csv(tmp_path / "ours" / name), (header, rows), name)


def test_scratch_domain_in_our_stats(db):
    with rocpd.connect(db) as c:
        tables = stats.collect(c)
    scratch = tables["scratch_memory"].set_index("Name")["Calls"].to_dict()
    assert scratch == {"SCRATCH_MEMORY_ALLOC": 1, "SCRATCH_MEMORY_FREE": 1,
                       "SCRATCH_MEMORY_RECLAIM": 1}
    domain = tables["domain"].set_index("Name")
    assert domain.loc["SCRATCH_MEMORY", "Calls"] == 3
    assert domain["Percentage"].sum() == pytest.approx(100.0)


# -- traces: ROCm's Perfetto and OTF2 writers draw scratch operations; so do ours (and Chrome's)
OPS = ["SCRATCH_MEMORY_ALLOC", "SCRATCH_MEMORY_FREE", "SCRATCH_MEMORY_RECLAIM"]


def test_scratch_in_every_trace(db, tmp_path):
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
    otf2 = pytest.importorskip("otf2")
    from rocpd.export import chrome, perfetto
    from rocpd.export import otf2 as otf2_export

    with rocpd.connect(db) as c:
        assert c.execute("SELECT count(*) FROM scratch_memory").fetchone()[0] == len(OPS)
        perfetto.write(c, str(tmp_path / "t.pftrace"))
        chrome.write(c, str(tmp_path / "t.json"))
        anchor = otf2_export.write(c, str(tmp_path / "arch"))
    trace = pb.Trace()
    trace.ParseFromString((tmp_path / "t.pftrace").read_bytes())
    names = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
             if p.HasField("track_descriptor")}
    begins = [p.track_event for p in trace.packet if p.HasField("track_event")
              and p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN
              and p.track_event.name.startswith("SCRATCH")]
    assert sorted(e.name for e in begins) == OPS
    assert {names[e.track_uuid] for e in begins} == {"Scratch memory"}
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert sorted(e["name"] for e in events if e.get("cat") == "SCRATCH_MEMORY") == OPS
    got = []
    with otf2.reader.open(anchor) as tr:
        for loc, e in tr.events:
            if isinstance(e, otf2.events.Enter) and e.region.name.startswith("SCRATCH"):
                got.append((loc.name, e.region.name, e.region.region_role))
    roles = otf2.RegionRole
    assert sorted(got) == [("Scratch memory", "SCRATCH_MEMORY_ALLOC", roles.ALLOCATE),
                           ("Scratch memory", "SCRATCH_MEMORY_FREE", roles.DEALLOCATE),
                           ("Scratch memory", "SCRATCH_MEMORY_RECLAIM", roles.DEALLOCATE)]
