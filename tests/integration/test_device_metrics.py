"""Device metrics over time (rocprof run --process-freq) on test-only stand-ins of NVML and ROCm
SMI (tests/standins/: no GPU exists here), through the real launcher, core and writer: the
values the stand-ins gave, value for value; the devices the program's runtime sees, numbered as
it numbers them; the rows rocprof-sys's writer would write; counter tracks in the exports; the
summary's min/mean/max; the plot."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
from metrics_standins import (
    NVML_LINK_BYTES,
    NVML_UNITS,
    build,
    nvml_value,
    rsmi_value,
)
from support import WORKLOADS, _env, open_db, run_rocprof

HZ = 20
GPU_METRICS = list(NVML_UNITS)
ROCM_SMI_METRICS = [m for m in GPU_METRICS if not m.startswith(("device_pcie", "device_link"))]


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    libs = build(tmp_path_factory.mktemp("standins"))
    if not libs:
        pytest.skip("no C compiler on PATH to build the test-only stand-in libraries")
    return libs


def record(tmp_path, env: dict, *extra, seconds: float = 1.0) -> str:
    """A run with metrics at HZ; *_VISIBLE_DEVICES only as `env` sets them (unset: all devices),
    never the caller's (a GPU host's CI sets them)."""
    full = _env(env)
    for var in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        if var not in env:
            full.pop(var, None)
    r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "m",
                        "--process-freq", str(HZ), "--cpus", "none", *extra,
                        str(WORKLOADS / "sleep_for.py"), str(seconds)],
                       env=full, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return str(tmp_path / "m_results.db")


def series(db: str) -> dict[str, list[tuple[int, float]]]:
    """Track name -> [(timestamp, value)] in time order."""
    out: dict[str, list] = {}
    with open_db(db) as c:
        for name, ts, value in c.execute(
                "SELECT TN.string, SA.timestamp, PE.value FROM rocpd_sample SA"
                " JOIN rocpd_track T ON T.id = SA.track_id JOIN rocpd_string TN ON TN.id = T.name_id"
                " JOIN rocpd_pmc_event PE ON PE.event_id = SA.event_id ORDER BY SA.timestamp"):
            out.setdefault(name, []).append((ts, value))
    return out


def meta(db: str) -> dict[str, str]:
    with open_db(db) as c:
        return dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.metrics.%'"))


@pytest.fixture(scope="module")
def nvml_db(standins, tmp_path_factory):
    env = {"ROCPROF_TEST_NVML_LIBRARY": standins["nvml"],
           "ROCPROF_TEST_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so",
           "ROCPROF_STANDIN_NVML_DEVICES": "2"}
    return record(tmp_path_factory.mktemp("nvml"), env)


@pytest.fixture(scope="module")
def rsmi_db(standins, tmp_path_factory):
    if standins["rocm_smi"] is None:
        pytest.skip("rocm_smi/rocm_smi.h not installed (apt-get install librocm-smi-dev)")
    env = {"ROCPROF_TEST_ROCM_SMI_LIBRARY": standins["rocm_smi"],
           "ROCPROF_TEST_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
           "ROCPROF_STANDIN_RSMI_DEVICES": "2"}
    return record(tmp_path_factory.mktemp("rsmi"), env)


# ---- NVML ----------------------------------------------------------------------------------

def test_nvml_values_are_the_stand_ins_reading_for_reading(nvml_db, standins):
    s = series(nvml_db)
    readings = int(meta(nvml_db)["rocprof.metrics.readings"])
    assert readings >= 10, readings  # 1 s at 20 Hz, on a loaded machine
    for d in (0, 1):
        for metric in GPU_METRICS:
            values = s[f"{metric} [{d}]"]
            if metric in NVML_LINK_BYTES:  # a rate: from the second reading, over the time apart
                assert len(values) == readings - 1
                for (t0, _), (t1, v) in zip([s[f"device_busy_gfx [{d}]"][0], *values], values, strict=False):
                    expected = NVML_LINK_BYTES[metric] / 1e6 / ((t1 - t0) / 1e9)
                    assert v == pytest.approx(expected, rel=1e-9), (metric, d)
                continue
            assert len(values) == readings, (metric, d)
            assert [v for _, v in values] == pytest.approx(
                [nvml_value(metric, d, k) for k in range(readings)], rel=1e-12), (metric, d,
                                                                                  standins["nvml_header"])


def test_nvml_rate_and_tracks_as_rocprof_sys_writes_them(nvml_db):
    s = series(nvml_db)
    times = [t for t, _ in s["device_busy_gfx [0]"]]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert statistics.median(gaps) == pytest.approx(1e9 / HZ, rel=0.2)
    with open_db(nvml_db) as c:
        # One track per counter and device, no thread; every sample's event in category nvml.
        tracks = c.execute("SELECT S.string, T.tid FROM rocpd_track T JOIN rocpd_string S"
                           " ON S.id = T.name_id").fetchall()
        gpu = {n for n, _ in tracks if n.startswith("device_")}
        assert gpu == {f"{m} [{d}]" for m in GPU_METRICS for d in (0, 1)}
        assert all(tid is None for _, tid in tracks)
        cats = c.execute("SELECT DISTINCT C.string FROM rocpd_sample SA JOIN rocpd_event E ON"
                         " E.id = SA.event_id JOIN rocpd_string C ON C.id = E.category_id JOIN"
                         " rocpd_track T ON T.id = SA.track_id JOIN rocpd_string N ON"
                         " N.id = T.name_id WHERE N.string LIKE 'device_%'").fetchall()
        assert cats == [("nvml",)]
        # Counters described once per (agent, counter), with their units; agents as CUDA numbers them.
        pmc = {(a, n): (u, arch, vt) for a, n, u, arch, vt in c.execute(
            "SELECT agent_id, name, units, target_arch, value_type FROM rocpd_info_pmc")}
        for d in (0, 1):
            for m, units in NVML_UNITS.items():
                assert pmc[(2 + d, m)] == (units, "GPU", "ABS")
        agents = c.execute("SELECT id, absolute_index, vendor_name, name, uuid FROM rocpd_info_agent"
                           " WHERE type = 'GPU' ORDER BY id").fetchall()
        assert agents == [(2 + d, d, "NVIDIA", f"Stand-in NVML GPU {d}",
                           f"GPU-5ca1ab1e-0000-4000-8000-{d:012d}") for d in (0, 1)]
        # Every value's pmc row is the counter of the track's own device.
        wrong = c.execute(
            "SELECT COUNT(*) FROM rocpd_pmc_event PE JOIN rocpd_sample SA ON SA.event_id = PE.event_id"
            " JOIN rocpd_track T ON T.id = SA.track_id JOIN rocpd_string N ON N.id = T.name_id"
            " JOIN rocpd_info_pmc I ON I.id = PE.pmc_id WHERE N.string NOT LIKE I.name || '%'"
            " OR (I.target_arch = 'GPU' AND N.string NOT LIKE '%[' || (I.agent_id - 2) || ']')"
        ).fetchone()[0]
        assert wrong == 0


def test_every_id_points_at_a_row_and_rocm_views_see_the_counters(nvml_db):
    with open_db(nvml_db) as c:
        dangling = c.execute(
            "SELECT (SELECT COUNT(*) FROM rocpd_pmc_event PE WHERE PE.pmc_id NOT IN"
            " (SELECT id FROM rocpd_info_pmc) OR PE.event_id NOT IN (SELECT id FROM rocpd_event)),"
            " (SELECT COUNT(*) FROM rocpd_sample WHERE track_id NOT IN (SELECT id FROM rocpd_track)),"
            " (SELECT COUNT(*) FROM rocpd_track WHERE name_id NOT IN (SELECT id FROM rocpd_string)),"
            " (SELECT COUNT(*) FROM rocpd_info_pmc WHERE agent_id NOT IN"
            "  (SELECT id FROM rocpd_info_agent))").fetchone()
        assert dangling == (0, 0, 0, 0)
        n_pmc = c.execute("SELECT COUNT(*) FROM rocpd_info_pmc").fetchone()[0]
        view = c.execute("SELECT COUNT(*), COUNT(agent_abs_index) FROM pmc_info").fetchone()
        assert view == (n_pmc, n_pmc)
        n = c.execute("SELECT COUNT(*) FROM rocpd_pmc_event").fetchone()[0]
        assert c.execute("SELECT COUNT(*) FROM metric_samples WHERE category = 'nvml'").fetchone()[0] + \
            c.execute("SELECT COUNT(*) FROM metric_samples WHERE category = 'cpu_frequency'"
                      ).fetchone()[0] == n
        # Sampled counters belong to no dispatch: ROCm's per-kernel view has none of them.
        assert c.execute("SELECT COUNT(*) FROM pmc_events").fetchone()[0] == 0


@pytest.mark.parametrize("visible, extra, device", [
    ("GPU-5ca1ab1e-0000-4000-8000-000000000001", (), 1),  # by UUID prefix, as CUDA takes it
    ("1", (), 1),
    (None, ("--gpus", "1"), 1),  # all visible, the second one chosen
])
def test_nvml_devices_numbered_as_cuda_numbers_them(standins, tmp_path, visible, extra, device):
    env = {"ROCPROF_TEST_NVML_LIBRARY": standins["nvml"],
           "ROCPROF_TEST_ROCM_SMI_LIBRARY": "/nonexistent", "ROCPROF_STANDIN_NVML_DEVICES": "2"}
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    db = record(tmp_path, env, *extra, seconds=0.4)
    ordinal = 0 if visible is not None else device
    with open_db(db) as c:
        agents = c.execute("SELECT id, uuid FROM rocpd_info_agent WHERE type = 'GPU'").fetchall()
    assert agents == [(2 + ordinal, f"GPU-5ca1ab1e-0000-4000-8000-{device:012d}")]
    values = [v for _, v in series(db)[f"device_busy_gfx [{ordinal}]"]]
    assert values == [nvml_value("device_busy_gfx", device, k) for k in range(len(values))]
    assert meta(db)["rocprof.metrics.gpu_source"].endswith("1 of 2 devices")


# ---- ROCm SMI ------------------------------------------------------------------------------

def test_rocm_smi_values_are_the_stand_ins_reading_for_reading(rsmi_db):
    s = series(rsmi_db)
    readings = int(meta(rsmi_db)["rocprof.metrics.readings"])
    assert readings >= 10
    for d in (0, 1):
        for metric in ROCM_SMI_METRICS:
            values = [v for _, v in s[f"{metric} [{d}]"]]
            assert values == pytest.approx([rsmi_value(metric, d, k) for k in range(readings)],
                                           rel=1e-12), (metric, d)
    # What the library does not give is not described: no empty counters.
    with open_db(rsmi_db) as c:
        names = {n for (n,) in c.execute("SELECT name FROM rocpd_info_pmc WHERE target_arch = 'GPU'")}
        agents = c.execute("SELECT id, vendor_name, uuid, json_extract(extdata, '$.pci_bus_id')"
                           " FROM rocpd_info_agent WHERE type = 'GPU' ORDER BY id").fetchall()
        cats = {r[0] for r in c.execute("SELECT category FROM metric_samples WHERE track LIKE 'device_%'")}
    assert names == set(ROCM_SMI_METRICS)
    assert agents == [(2 + d, "AMD", f"GPU-5ca1ab1e0000000{d}", f"0000:{0x10 + d:02x}:00.0")
                      for d in (0, 1)]
    assert cats == {"rocm_smi"}


@pytest.mark.parametrize("var", ["ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"])
def test_rocm_smi_devices_numbered_as_hip_numbers_them(standins, tmp_path, var):
    if standins["rocm_smi"] is None:
        pytest.skip("rocm_smi/rocm_smi.h not installed (apt-get install librocm-smi-dev)")
    env = {"ROCPROF_TEST_ROCM_SMI_LIBRARY": standins["rocm_smi"],
           "ROCPROF_TEST_NVML_LIBRARY": "/nonexistent", var: "1"}
    db = record(tmp_path, env, seconds=0.4)
    with open_db(db) as c:
        agents = c.execute("SELECT id, uuid FROM rocpd_info_agent WHERE type = 'GPU'").fetchall()
    assert agents == [(2, "GPU-5ca1ab1e00000001")]
    temps = [v for _, v in series(db)["device_temp [0]"]]
    assert temps == [rsmi_value("device_temp", 1, k) for k in range(len(temps))]  # junction


# ---- analysis: summary, exports, plot ------------------------------------------------------

def test_summary_min_mean_max_are_the_hand_computed_ones(nvml_db):
    import rocpd
    from rocpd.device_metrics import samples as metrics
    from rocpd.summary import stats

    readings = int(meta(nvml_db)["rocprof.metrics.readings"])
    with rocpd.connect(nvml_db) as db:
        table = metrics.summary(db)
        text = stats.format_summary(db, top=None)
        cut = stats.format_summary(db)
    rows = {(r.Agent, r.Metric): r for r in table.itertuples()}
    for d in (0, 1):
        for metric in ("device_busy_gfx", "device_power", "device_temp", "device_memory_usage"):
            want = [nvml_value(metric, d, k) for k in range(readings)]
            r = rows[(f"GPU {d}", f"{metric} [{d}]")]
            assert (r.Samples, r.Units) == (readings, NVML_UNITS[metric])
            assert (r.Min, r.Max) == (min(want), max(want))
            assert r.Mean == pytest.approx(sum(want) / len(want), rel=1e-12)
    assert "== DEVICE_METRICS ==" in text and "device_busy_gfx [1]" in text
    left = len(table) - stats.TOP_ROWS  # the default: the shared row limit, the rest named
    assert left <= 0 or f"… and {left} more (use --all)" in cut


def test_rocpd_summary_and_stats_csv_show_the_metrics(nvml_db, tmp_path):
    from rocpd.cli import main

    assert main(["summary", nvml_db, "--domain", "device_metrics", "--csv",
                 str(tmp_path / "p")]) == 0
    import csv

    with open(tmp_path / "p_device_metrics_stats.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    busy = next(r for r in rows if r["Metric"] == "device_busy_gfx [1]")
    readings = int(meta(nvml_db)["rocprof.metrics.readings"])
    want = [nvml_value("device_busy_gfx", 1, k) for k in range(readings)]
    assert (busy["Agent"], int(busy["Samples"]), float(busy["Max"])) == ("GPU 1", readings, max(want))


def test_perfetto_counter_tracks_hold_the_database_values(nvml_db, tmp_path):
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the 'perfetto' package is not installed")
    import rocpd
    from rocpd.export import perfetto

    with rocpd.connect(nvml_db) as db:
        path = perfetto.write(db, str(tmp_path / "t.pftrace"))
    trace = pb.Trace()
    with open(path, "rb") as fh:
        trace.ParseFromString(fh.read())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    got: dict[str, list] = {}
    for p in trace.packet:
        if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_COUNTER:
            got.setdefault(tracks[p.track_event.track_uuid].name, []).append(
                (p.timestamp, p.track_event.double_counter_value))
    assert got == series(nvml_db)
    by_name = {t.name: t for t in tracks.values() if t.HasField("counter")}
    assert by_name["device_power [1]"].counter.unit_name == "W"
    assert tracks[by_name["device_power [1]"].parent_uuid].name.startswith("GPU 1")
    assert tracks[by_name["process_rss"].parent_uuid].HasField("process")


def test_chrome_counter_events_hold_the_database_values(nvml_db, tmp_path):
    import rocpd
    from rocpd.export import chrome

    with rocpd.connect(nvml_db) as db:
        path = chrome.write(db, str(tmp_path / "t.json"))
    with open(path) as fh:
        events = json.load(fh)["traceEvents"]
    got: dict[str, list] = {}
    for e in events:
        if e["ph"] == "C":
            got.setdefault(e["name"], []).append((e["ts"], e["args"]["value"]))
    want = {k: [(t / 1000.0, v) for t, v in vals] for k, vals in series(nvml_db).items()}
    assert got == want


def test_rocpd_plot_writes_a_png_and_names_unknown_counters(nvml_db, tmp_path, capsys):
    from rocpd.cli import main

    out = tmp_path / "m.png"
    assert main(["plot", nvml_db, "-m", "device_busy_gfx", "-m", "device_power", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", nvml_db, "--list"]) == 0
    listed = capsys.readouterr().out.split()
    assert "device_busy_gfx" in listed and "process_rss" in listed
    assert main(["plot", nvml_db, "-m", "device_nonsense", "-o", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "device_nonsense" in err[0] and "device_power" in err[0]
    assert not (tmp_path / "x.png").exists()


def test_plot_of_a_database_without_counters_says_how_to_record_them(tmp_path, capsys):
    from rocpd.cli import main
    from rocpd.testing import DatabaseBuilder

    with DatabaseBuilder(tmp_path / "k.db") as b:
        b.kernel("k", 1000, 2000)
    assert main(["plot", str(tmp_path / "k.db"), "-o", str(tmp_path / "x.png")]) == 1
    assert "--process-freq" in capsys.readouterr().err


# ---- rocprof info and options ----------------------------------------------------------------

def test_rocprof_info_says_which_metrics_sources_are_live(standins):
    r = run_rocprof("info", "--json", env={"ROCPROF_TEST_NVML_LIBRARY": standins["nvml"],
                                           "ROCPROF_TEST_ROCM_SMI_LIBRARY": "/nonexistent/x.so"})
    assert r.returncode == 0, r.stderr
    src = {s["name"]: s for s in json.loads(r.stdout)["metrics_sources"]}
    assert src["NVML"]["live"] and src["NVML"]["detail"] == f"{standins['nvml']}: 2 devices"
    assert not src["ROCm SMI"]["live"] and "/nonexistent/x.so" in src["ROCm SMI"]["detail"]
    assert src["/proc"]["live"]
    r = run_rocprof("info", env={"ROCPROF_TEST_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})
    line = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("NVML:"))
    assert "not live" in line and "/nonexistent/libnvidia-ml.so.1" in line


@pytest.mark.parametrize("args, message", [
    (("--process-freq", "0"), "--process-freq must be between 1 and 1000 Hz, not 0"),
    (("--process-freq", "5000"), "--process-freq must be between 1 and 1000 Hz, not 5000"),
    (("--process-freq", "--gpus", "0-"), "--gpus '0-': expected all, none or a list like 0,2-3"),
    (("--process-freq", "--cpus", "x"), "--cpus 'x': expected all, none or a list like 0,2-3"),
])
def test_bad_metrics_options_are_one_line_errors(tmp_path, args, message):
    r = run_rocprof("run", "-d", tmp_path, *args, WORKLOADS / "sleep_for.py", "0")
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr
