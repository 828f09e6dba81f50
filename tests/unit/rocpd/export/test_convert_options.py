"""ROCm's ``rocpd convert`` options with ROCm's meaning: --kernel-rename, --agent-index-value,
--group-by-queue and the Perfetto buffer settings, on databases from the real writer; Perfetto
files are read back with perfetto's own protos."""

from __future__ import annotations

import csv
import json
import os

import pytest

from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent

T = 1_000_000


def kernel_names(path):
    with open(path, newline="") as fh:
        return [r["Kernel_Name"] for r in csv.DictReader(fh)]


@pytest.fixture
def ranged(tmp_path, monkeypatch):
    """gemm launched inside ROCTx range "forward", relu outside any range, on stream 1 / queue 3;
    a second GPU numbered differently by node id (2), logical id (1) and per-type index (1)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.db"
    with DatabaseBuilder(path, gpus=0) as b:
        b._w.agent(CPU_AGENT, type="CPU", absolute_index=0, logical_index=0, type_index=0,
                   name="cpu0")
        b._w.agent(gpu_agent(0), type="GPU", absolute_index=2, logical_index=1, type_index=0,
                   name="gpu0")
        b.marker("forward", T, T + 1000)
        b.kernel("gemm", T + 100, T + 400, region="forward", agent=gpu_agent(0), stream=1, queue=3)
        b.kernel("relu", T + 2000, T + 2100, agent=gpu_agent(0), stream=1, queue=3)
    return str(path)


def test_kernel_rename_names_kernels_by_their_range(cli, ranged):
    assert cli("convert", ranged, "-f", "csv", "-o", "plain/r")[0] == 0
    assert kernel_names("plain/r_kernel_trace.csv") == ["gemm", "relu"]
    assert cli("convert", ranged, "-f", "csv", "-o", "renamed/r", "--kernel-rename")[0] == 0
    assert kernel_names("renamed/r_kernel_trace.csv") == ["forward", "relu"]


def test_kernel_rename_uses_the_region_a_renaming_capture_stored(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with DatabaseBuilder(tmp_path / "k.db", kernel_rename=True) as b:
        corr = b.marker("outer", T, T + 1000)
        b.marker("inner", T + 10, T + 900)
        b.kernel("gemm", T + 100, T + 400, region="inner", range_corr=corr)
    assert cli("convert", "-i", "k.db", "-f", "csv", "-d", "o", "--kernel-rename")[0] == 0
    assert kernel_names("o/out_kernel_trace.csv") == ["inner"]


def test_kernel_rename_in_query(cli, ranged):
    rc, out, _ = cli("query", ranged, "--sql", "SELECT name FROM kernels ORDER BY start",
                     "--kernel-rename", "-f", "json")
    assert rc == 0 and [r["name"] for r in json.loads(out)] == ["forward", "relu"]
    rc, out, _ = cli("query", ranged, "--sql", "SELECT name FROM kernels ORDER BY start",
                     "-f", "json")
    assert rc == 0 and [r["name"] for r in json.loads(out)] == ["gemm", "relu"]


@pytest.mark.parametrize("mode,label", [("relative", "Agent 1"), ("absolute", "Agent 2"),
                                        ("type-relative", "GPU 0")])
def test_agent_index_value_in_csv(cli, ranged, mode, label):
    assert cli("convert", ranged, "-f", "csv", "-o", f"{mode}/r", "--agent-index-value", mode)[0] == 0
    with open(f"{mode}/r_kernel_trace.csv", newline="") as fh:
        assert {r["Agent_Id"] for r in csv.DictReader(fh)} == {label}


def _trace(path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    with open(path, "rb") as fh:
        return pb.Trace.FromString(fh.read())


def _track_names(trace):
    return {p.track_descriptor.name for p in trace.packet if p.HasField("track_descriptor")}


def test_csv_agent_ids_are_relative_without_agent_index_value(cli, ranged):
    assert cli("convert", ranged, "-f", "csv", "-o", "default/r")[0] == 0
    with open("default/r_kernel_trace.csv", newline="") as fh:
        assert {r["Agent_Id"] for r in csv.DictReader(fh)} == {"Agent 1"}  # as rocprofv3's CSV


def test_agent_index_and_group_by_queue_in_perfetto(cli, ranged):
    # Trace labels number GPUs per type without --agent-index-value.
    assert cli("convert", ranged, "-f", "pftrace", "-o", "s.pftrace")[0] == 0
    names = _track_names(_trace("s.pftrace"))
    assert "GPU 0 (gpu0)" in names and "Stream 1" in names and "Queue 3" not in names
    assert cli("convert", ranged, "-f", "pftrace", "-o", "rel.pftrace", "--agent-index-value",
               "relative")[0] == 0
    assert "GPU 1 (gpu0)" in _track_names(_trace("rel.pftrace"))
    assert cli("convert", ranged, "-f", "pftrace", "-o", "q.pftrace", "--group-by-queue",
               "--agent-index-value", "absolute")[0] == 0
    names = _track_names(_trace("q.pftrace"))
    assert "GPU 2 (gpu0)" in names and "Queue 3" in names and "Stream 1" not in names


def _slice_names(trace):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    return [p.track_event.name for p in trace.packet if p.HasField("track_event")
            and p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN]


@pytest.fixture
def many(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with DatabaseBuilder(tmp_path / "m.db") as b:
        for i in range(400):
            b.kernel(f"k{i:03d}", T + i * 100, T + i * 100 + 50)
    return "m.db"


def test_perfetto_buffer_size_discard_keeps_the_first_events_and_says_so(cli, many):
    assert cli("convert", many, "-f", "pftrace", "-o", "all.pftrace")[0] == 0
    full = _slice_names(_trace("all.pftrace"))
    assert len(full) == 400
    rc, _, err = cli("convert", many, "-f", "pftrace", "-o", "d.pftrace",
                     "--perfetto-buffer-size", "8")
    kept = _slice_names(_trace("d.pftrace"))
    assert rc == 0 and 0 < len(kept) < 400 and kept == full[:len(kept)]
    assert os.path.getsize("d.pftrace") <= 8 * 1024 + 2048  # descriptors and the config besides
    assert "trace events left out, the newest" in err and "--perfetto-buffer-size 8 KB" in err


def test_perfetto_ring_buffer_keeps_the_last_events(cli, many):
    rc, _, err = cli("convert", many, "-f", "pftrace", "-o", "r.pftrace",
                     "--perfetto-buffer-size", "8", "--perfetto-buffer-fill-policy", "ring_buffer")
    kept = _slice_names(_trace("r.pftrace"))
    assert rc == 0 and 0 < len(kept) < 400 and kept[-1] == "k399" and "k000" not in kept
    assert "the oldest" in err


def test_perfetto_sdk_settings_are_recorded_in_the_trace_config(cli, many):
    assert cli("convert", many, "-f", "pftrace", "-o", "c.pftrace", "--perfetto-backend", "system",
               "--perfetto-shmem-size-hint", "128")[0] == 0
    trace = _trace("c.pftrace")
    cfgs = [p.trace_config for p in trace.packet if p.HasField("trace_config")]
    assert len(cfgs) == 1
    note = cfgs[0].data_sources[0].config.legacy_config
    assert "perfetto_backend=system" in note and "perfetto_shmem_size_hint_kb=128" in note
    assert len(_slice_names(trace)) == 400  # nothing left out without a size


def test_rocm_form_passes_options_to_every_format(cli, ranged):
    rc, _, err = cli("convert", "-i", ranged, "-f", "csv", "pftrace", "otf2", "-d", "o",
                     "--kernel-rename", "--agent-index-value", "type-relative", "--group-by-queue")
    assert rc == 0, err
    assert kernel_names("o/out_kernel_trace.csv") == ["forward", "relu"]
    assert "Queue 3" in _track_names(_trace("o/out_results.pftrace"))
    assert os.path.isfile("o/out_results.otf2")


def _chrome_tracks(path):
    with open(path) as fh:
        return {e["args"]["name"] for e in json.load(fh)["traceEvents"]
                if e.get("name") == "thread_name"}


@pytest.mark.parametrize("flags,label", [((), "GPU 0 / Stream 1"),
                                         (("--agent-index-value", "relative"), "GPU 1 / Stream 1"),
                                         (("--agent-index-value", "absolute", "--group-by-queue"),
                                          "GPU 2 / Queue 3")])
def test_agent_index_and_group_by_queue_in_chrome(cli, ranged, flags, label):
    assert cli("convert", ranged, "-f", "chrome", "-o", "t.json", *flags)[0] == 0
    assert label in _chrome_tracks("t.json")


@pytest.mark.parametrize("mode,group", [(None, "GPU 0 ("), ("absolute", "GPU 2 (")])
def test_agent_index_in_otf2(ranged, mode, group):
    import rocpd
    from rocpd.export import otf2

    with rocpd.connect(ranged) as db:
        groups = otf2.collect(db, **({"agent_index": mode} if mode else {})).groups
    assert [g[1] for k, g in groups.items() if k[0] == "g"][0].startswith(group)


def _add_sampled_counter(path, agent_id, track, ts, value):
    """A device metric sampled as rocprof run --process-freq stores one (rocpd_info_pmc, a track
    named after the counter and device, a sample and its rocpd_pmc_event), written into the
    database's tables with SQL (the fixture writer has no call for it)."""
    import sqlite3

    con = sqlite3.connect(path)
    (table,) = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                           " AND name LIKE 'rocpd_string%'").fetchone()
    sfx = table[len("rocpd_string"):]
    nid, pid = con.execute("SELECT nid, id FROM rocpd_info_process").fetchone()

    def insert(t, **cols):  # the guid is a generated column
        return con.execute(f"INSERT INTO rocpd_{t}{sfx} ({', '.join(cols)}) VALUES"
                           f" ({', '.join('?' * len(cols))})", list(cols.values())).lastrowid

    metric = track.split(" [")[0]
    pmc = insert("info_pmc", nid=nid, pid=pid, agent_id=agent_id, target_arch="GPU", name=metric,
                 symbol=metric, units="%", value_type="ABS")
    tr = insert("track", nid=nid, pid=pid, name_id=insert("string", string=track))
    event = insert("event", category_id=insert("string", string="amd_smi"))
    insert("sample", track_id=tr, timestamp=ts, event_id=event)
    insert("pmc_event", event_id=event, pmc_id=pmc, value=value)
    con.commit()
    con.close()


def test_sampled_gpu_counters_share_the_gpu_track_of_its_kernels(cli, ranged):
    # The metric rows carry the GPU's node id (2); the label is its per-type number (GPU 0).
    _add_sampled_counter(ranged, gpu_agent(0), "device_busy [0]", T + 150, 87.0)
    assert cli("convert", ranged, "-f", "pftrace", "-o", "m.pftrace")[0] == 0
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in _trace("m.pftrace").packet
              if p.HasField("track_descriptor")}
    parent = {t.name: tracks[t.parent_uuid].name for t in tracks.values() if t.parent_uuid}
    assert parent["device_busy [0]"] == parent["Stream 1"] == "GPU 0 (gpu0)"
