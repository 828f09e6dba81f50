"""AMD --gpu-metrics (rocprofiler-sdk's device counting service, cpp/capture/rocprofiler_sdk/
device_counting*) through its real entry points, on the TEST-ONLY stand-ins of tests/amd_standin
(no AMD GPU exists here): `rocprof run` names rocprof's tool in ROCP_TOOL_LIBRARIES, the software
HSA runtime loads the stand-in rocprofiler-sdk, which calls rocprofiler_configure and the tool's
initialize (where the device counting contexts are configured), and answers each read with its
stand-in GPU's counters: GRBM_COUNT its 1 GHz clock, GRBM_GUI_ACTIVE the time some stand-in kernel
executed, and per busy microsecond 1 KiB fetched and 9 L2 hits to 1 miss; no SQ counter. What
passes here has not run on AMD hardware (rocprof info and the database say so).

Skipped where this build has no rocprofiler-sdk backend with the device counting service (no
rocprofiler-sdk 0.6+ headers at build time: `make sdk-compile-check` builds one)."""

from __future__ import annotations

import pytest
import support

N = 6  # launches of each kernel


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from rocprof import _core

    out = tmp_path_factory.mktemp("amd_gpu_metrics")
    standin = support.build_sdk_standin(out, support.build_amd_standin(out))
    compiled = {name: c for name, c, _live, _why in _core.backends()}
    if not compiled.get("rocprofiler-sdk-device-counting"):
        pytest.skip("the device counting service is not compiled into this build (its "
                    "rocprofiler-sdk headers lack it)")
    r = support.run_rocprof("run", "-d", out / "out", "--gpu-metrics", "--",
                            standin["app"], str(N), env=standin["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    [path] = (out / "out").rglob("*_results.db")
    return r, path


def _series(path) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list] = {}
    with support.open_db(path) as c:
        for name, ts, value in c.execute(
                "SELECT TN.string, SA.timestamp, PE.value FROM rocpd_sample SA"
                " JOIN rocpd_track T ON T.id = SA.track_id JOIN rocpd_string TN ON TN.id = T.name_id"
                " JOIN rocpd_pmc_event PE ON PE.event_id = SA.event_id ORDER BY SA.timestamp"):
            out.setdefault(name, []).append((ts, value))
    return out


def _metadata(path) -> dict[str, str]:
    with support.open_db(path) as c:
        return dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE "
                              "'rocprof.gpu_metrics.%'"))


def test_the_stand_in_gpus_counters_become_the_metric_tracks(run):
    _, path = run
    tracks = _series(path)
    busy = [v for _, v in tracks["pm_gr_active [0]"]]
    assert busy and all(0 <= v <= 100 for v in busy) and max(busy) > 0, busy
    # 9 hits to 1 miss: every interval with a kernel reads 90 %, one without has no value.
    hits = [v for _, v in tracks["pm_l2_hit_rate [0]"]]
    assert hits and hits == pytest.approx([90.0] * len(hits))
    assert max(v for _, v in tracks["pm_dram_read_bytes [0]"]) > 0
    # Each track ends with its last value at the last read: times never go back.
    for name, rows in tracks.items():
        assert [t for t, _ in rows] == sorted(t for t, _ in rows), name


def test_the_metadata_says_what_was_sampled_and_what_was_left_out(run):
    r, path = run
    meta = _metadata(path)
    assert meta["rocprof.gpu_metrics.status.gpu0"] == "on"
    assert meta["rocprof.gpu_metrics.chip.gpu0"] == "gfx942"
    assert "never run on AMD hardware" in meta["rocprof.gpu_metrics.backend"]
    assert "pm_gr_active=GRBM_GUI_ACTIVE/GRBM_COUNT" in meta["rocprof.gpu_metrics.metrics.gpu0"]
    # The stand-in has no SQ counters: those metrics are left out, each with its reason.
    assert ("pm_tensor_active: gfx942 has no counter SQ_VALU_MFMA_BUSY_CYCLES"
            in meta["rocprof.gpu_metrics.left_out.gpu0"])
    assert int(meta["rocprof.gpu_metrics.samples.gpu0"]) > 0
    assert meta["rocprof.gpu_metrics.errors.gpu0"] == "0"
    summary = [ln for ln in r.stderr.splitlines() if "GPU metrics (rocprofiler-sdk): GPU 0" in ln]
    assert len(summary) == 1, r.stderr
    with support.open_db(path) as c:
        components = {row[0] for row in c.execute(
            "SELECT DISTINCT component FROM rocpd_info_pmc WHERE name LIKE 'pm!_%' ESCAPE '!'")}
    assert components == {"rocprofiler_sdk_device_counting"}


def test_info_says_it_is_a_stand_in_and_never_ran_on_amd_hardware(run, tmp_path):
    import json

    r = support.run_rocprof("info", "--json", env={"ROCPROF_SDK_STANDIN": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    rows = {b["name"]: b for b in json.loads(r.stdout)["backends"]}
    row = rows["rocprofiler-sdk-device-counting"]
    assert row["compiled"] and "never run on AMD hardware" in row["reason"]
