"""Call-stack samples (--sample, with --process-freq metrics beside them) in every trace: ROCm's
Perfetto writer draws each row of its samples view as an instant, and so do ours (Perfetto,
Chrome JSON); call stacks are also Perfetto CPU-profile samples and OTF2 CallingContextSamples,
each with the frames the database holds. Perfetto is read with its own protos, OTF2 with the
otf2 reader."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from rocm_views import connect_with_rocm_views
from support import WORKLOADS, run_rocprof

import rocpd
from rocpd.summary.samples import Stacks

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the 'perfetto' package is not installed")
otf2 = pytest.importorskip("otf2", reason="the 'otf2' package is not installed")


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    out = tmp_path_factory.mktemp("sampled")
    r = run_rocprof("run", "-d", out, "-o", "s", "--process-freq", "100", "--sample", "1000",
                    WORKLOADS / "sampling_threads.py", "0.3")
    assert r.returncode == 0, r.stderr
    db = str(out / "s_results.db")
    _add_empty_stack_sample(db)
    con = connect_with_rocm_views(db)
    rocm = con.execute("SELECT count(*) FROM temp.samples").fetchone()[0]
    with rocpd.connect(db) as c:
        stacks = Stacks(c)
        rows = [(tid, ts, stacks.frames(g, sid)) for g, tid, ts, sid in c.execute(
            "SELECT guid, tid, timestamp, stack_id FROM samples WHERE category = 'PYTHON_SAMPLE'")]
        assert c.execute("SELECT count(*) FROM samples").fetchone()[0] == rocm
    assert len(rows) == rocm > 20  # every sample is a call stack here
    return db, rows, tmp_path_factory.mktemp("traces")


def _add_empty_stack_sample(db: str) -> None:
    """A thread sampled while it ran no Python code (starting up or exiting) has a sample with
    no frames; the sampler leaves one only now and then, so the fixture always holds one."""
    import sqlite3

    con = sqlite3.connect(db)
    with con:
        g = con.execute("SELECT guid FROM rocpd_info_node").fetchone()[0].replace("-", "_")
        track, ts, cat = con.execute(
            f"SELECT s.track_id, s.timestamp, e.category_id FROM rocpd_sample_{g} s"
            f" JOIN rocpd_event_{g} e ON e.id = s.event_id"
            f" JOIN rocpd_string_{g} c ON c.id = e.category_id"
            " WHERE c.string = 'PYTHON_SAMPLE' ORDER BY s.timestamp DESC").fetchone()
        ev = con.execute(f"INSERT INTO rocpd_event_{g} (category_id, stack_id) VALUES (?, 0)",
                         (cat,)).lastrowid
        con.execute(f"INSERT INTO rocpd_sample_{g} (track_id, timestamp, event_id)"
                    " VALUES (?, ?, ?)", (track, ts + 1000, ev))
    con.close()


def test_perfetto_instants_and_profile_samples(sampled):
    db, rows, out = sampled
    from rocpd.export import perfetto

    with rocpd.connect(db) as c:
        perfetto.write(c, str(out / "t.pftrace"))
    trace = pb.Trace()
    trace.ParseFromString((out / "t.pftrace").read_bytes())
    instants = [p for p in trace.packet if p.HasField("track_event")
                and p.track_event.type == pb.TrackEvent.TYPE_INSTANT]
    assert len(instants) == len(rows)
    names, frames, stacks, got = {}, {}, {}, []
    for p in trace.packet:  # interned data first seen in the packet that needs it
        for s in p.interned_data.function_names:
            names[s.iid] = s.str.decode()
        for f in p.interned_data.frames:
            frames[f.iid] = names[f.function_name_id]
        for cs in p.interned_data.callstacks:
            stacks[cs.iid] = tuple(frames[i] for i in cs.frame_ids)
        if p.HasField("perf_sample"):
            got.append((p.perf_sample.tid, p.timestamp, stacks[p.perf_sample.callstack_iid]))
    want = [(tid, ts, tuple(f.function for f in fr)) for tid, ts, fr in rows]
    # a sample with no frames is an instant only: a CPU-profile sample needs a call stack
    assert Counter(got) == Counter(w for w in want if w[2])
    assert Counter(p.track_event.name for p in instants if p.track_event.name != "PYTHON_SAMPLE"
                   ) == Counter(s[-1] for *_, s in want if s)


def test_chrome_instants(sampled):
    db, rows, out = sampled
    from rocpd.export import chrome

    with rocpd.connect(db) as c:
        chrome.write(c, str(out / "t.json"))
    ev = [e for e in json.loads((out / "t.json").read_text())["traceEvents"] if e["ph"] == "i"]
    assert len(ev) == len(rows)
    # a sample with no frames is an instant with no stack
    assert Counter((e["tid"], e.get("args", {}).get("stack")) for e in ev) == Counter(
        (tid, ";".join(f.label(lines=True) for f in fr) if fr else None) for tid, _ts, fr in rows)
    assert sum(1 for _t, _ts, fr in rows if not fr) >= 1


def test_otf2_calling_context_samples(sampled):
    db, rows, out = sampled
    from rocpd.export import otf2 as exporter

    with rocpd.connect(db) as c:
        anchor = exporter.write(c, str(out / "arch"))
    got, bare = [], []
    with otf2.reader.open(anchor) as tr:
        for _loc, e in tr.events:
            if isinstance(e, otf2.events.Enter) and e.region.paradigm == otf2.Paradigm.USER:
                bare.append(e.time)  # a sample with no frames: a zero-length region
            if isinstance(e, otf2.events.CallingContextSample):
                chain, cc = [], e.calling_context
                while cc is not None:
                    chain.append(cc.region.name)
                    cc = cc.parent
                got.append((e.time, tuple(reversed(chain))))
    assert Counter(got) == Counter((ts, tuple(f.function for f in fr))
                                   for _t, ts, fr in rows if fr)
    assert sorted(bare) == sorted(ts for _t, ts, fr in rows if not fr)
