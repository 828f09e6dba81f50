"""Energy capture (rocprof run --energy, and the counter among --process-freq's metrics) on the
test-only stand-ins of NVML and ROCm SMI (tests/standins/energy_standin.h: device d draws
W * (d + 1) watts and its counter moves every ENERGY_MS ms), through the real launcher, core and
writer: the `device_energy` counter in joules, never decreasing (across the 32-bit wrap of
AMD's counter too), its measured update period, the metadata the energy analysis reads, and
--energy reading nothing else."""

from __future__ import annotations

import statistics
import subprocess
import sys

import pytest
from metrics_standins import build, nvml_value
from support import WORKLOADS, _env, open_db
from test_device_metrics import series

WATTS = 100.0
RSMI_J_PER_COUNT = 15.25e-6  # the stand-in's resolution (ENERGY_COUNT_UJ)
WRAP = 1 << 32
ABSENT = {"ROCPROF_TEST_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
          "ROCPROF_TEST_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so",
          "ROCPROF_TEST_AMD_SMI_LIBRARY": "/nonexistent/libamd_smi.so"}


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    libs = build(tmp_path_factory.mktemp("standins"))
    if not libs:
        pytest.skip("no C compiler on PATH to build the test-only stand-in libraries")
    return libs


def record(tmp_path, env: dict, *options, seconds: float = 1.0) -> tuple[str, str]:
    """(database, stderr) of a run with `options`; *_VISIBLE_DEVICES unset (all devices)."""
    full = _env({**ABSENT, **env})
    for var in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        full.pop(var, None)
    r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "e",
                        *options, str(WORKLOADS / "sleep_for.py"), str(seconds)],
                       env=full, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return str(tmp_path / "e_results.db"), r.stderr


def meta(db: str) -> dict[str, str]:
    with open_db(db) as c:
        return dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.%'"))


def watts_of(values: list[tuple[int, float]]) -> float:
    """The mean power between the first and the last change of a cumulative counter."""
    changes = [(t, v) for (t, v), (_, before) in zip(values[1:], values, strict=False) if v != before]
    (t0, e0), (t1, e1) = changes[0], changes[-1]
    return (e1 - e0) / ((t1 - t0) / 1e9)


def nondecreasing(values: list[tuple[int, float]]) -> bool:
    return all(b >= a for (_, a), (_, b) in zip(values, values[1:], strict=False))


def nvml_env(standins, period_ms: int, with_counter: int = 2) -> dict:
    return {"ROCPROF_TEST_NVML_LIBRARY": standins["nvml"], "ROCPROF_STANDIN_NVML_DEVICES": "2",
            "ROCPROF_STANDIN_ENERGY_W": str(WATTS), "ROCPROF_STANDIN_ENERGY_MS": str(period_ms),
            "ROCPROF_STANDIN_ENERGY_DEVICES": str(with_counter)}


@pytest.fixture(scope="module")
def energy_only(standins, tmp_path_factory):
    """--energy alone on NVML: device 0 has the counter (updating every 40 ms), device 1 not."""
    db, _ = record(tmp_path_factory.mktemp("nvml"), nvml_env(standins, 40, with_counter=1),
                   "--energy")
    return db


# ---- --energy alone --------------------------------------------------------------------------

def test_energy_alone_stores_the_counter_and_power_where_there_is_none(energy_only):
    s = series(energy_only)
    # Nothing else: no other device metric, no host or process figure.
    assert set(s) == {"device_energy [0]", "device_power [1]"}
    energy = s["device_energy [0]"]
    assert nondecreasing(energy)
    assert watts_of(energy) == pytest.approx(WATTS, rel=0.15)
    # The NVML stand-in counts mJ from 1 MJ: joules, not millijoules.
    assert 1e6 <= energy[0][1] < 1e6 + 10 * WATTS
    power = [v for _, v in s["device_power [1]"]]
    assert power == [nvml_value("device_power", 1, 0)] * len(power)  # no utilisation read: k = 0
    # --energy's default rate, 100 ticks a second; once the counter's 40 ms period is known it
    # is read only from 1.5 ticks before each update until the update is seen: still every
    # change within one tick of the reading before it, in half the readings or fewer. The
    # limit allows a loaded box's late wake-ups (medians of 12-21 ms seen at load 7 on 2 cores)
    # and still fails a reader that waits for the 40 ms update period.
    changes = [t - before for (t, v), (before, was) in zip(energy[1:], energy, strict=False) if v != was]
    assert statistics.median(changes) <= 3e7, changes
    assert len(changes) >= 15
    m = meta(energy_only)
    assert int(m["rocprof.energy.counter_reads.gpu0"]) == len(energy)
    assert len(energy) < int(m["rocprof.energy.readings"])
    # The period is known after 8 changes (~0.35 s): the second half of the run is read at
    # ~2 of its ~5 ticks per update.
    t0, t1 = energy[0][0], energy[-1][0]
    late = [t for t, _ in energy if t > (t0 + t1) / 2]
    assert len(late) <= 0.6 * ((t1 - t0) / 2 / 1e7), (len(late), (t1 - t0) / 1e9)


def test_energy_counter_described_as_the_contract_says(energy_only):
    with open_db(energy_only) as c:
        pmc = c.execute("SELECT agent_id, name, symbol, units, description, target_arch, value_type"
                        " FROM rocpd_info_pmc ORDER BY agent_id").fetchall()
        cats = {r[0] for r in c.execute("SELECT category FROM metric_samples")}
    assert [p[:4] for p in pmc] == [(2, "device_energy", "energy", "J"), (3, "device_power", "Power", "W")]
    assert "cumulative energy counter in joules" in pmc[0][4]
    assert pmc[0][5:] == ("GPU", "ABS")
    assert cats == {"nvml"}


def test_energy_metadata_names_the_source_and_the_measured_period(energy_only):
    m = meta(energy_only)
    assert m["rocprof.energy.source.gpu0"] == "counter"
    assert m["rocprof.energy.source.gpu1"] == "power"
    assert int(m["rocprof.energy.period_ns.gpu0"]) == pytest.approx(40e6, rel=0.2)
    assert int(m["rocprof.energy.period_ns.gpu1"]) == 0  # the stand-in's power never moves here
    assert m["rocprof.energy.hz"] == "100"
    assert "rocprof.metrics.readings" not in m and "rocprof.metrics.hz" not in m


def test_rocm_smi_counter_is_unwrapped_at_32_bits(standins, tmp_path):
    if standins["rocm_smi"] is None:
        pytest.skip("rocm_smi/rocm_smi.h not installed (apt-get install librocm-smi-dev)")
    # Device 0 (100 W) wraps about 0.3 s in, device 1 (200 W) sooner; the counter moves every 25 ms.
    start = WRAP - int(0.3 * WATTS / RSMI_J_PER_COUNT)
    env = {"ROCPROF_TEST_ROCM_SMI_LIBRARY": standins["rocm_smi"], "ROCPROF_STANDIN_RSMI_DEVICES": "2",
           "ROCPROF_STANDIN_ENERGY_W": str(WATTS), "ROCPROF_STANDIN_ENERGY_MS": "25",
           "ROCPROF_STANDIN_ENERGY_START": str(start)}
    db, _ = record(tmp_path, env, "--energy")
    s, m = series(db), meta(db)
    assert set(s) == {"device_energy [0]", "device_energy [1]"}
    for d in (0, 1):
        energy = s[f"device_energy [{d}]"]
        assert nondecreasing(energy), d
        assert energy[0][1] < WRAP * RSMI_J_PER_COUNT < energy[-1][1], d  # past the wrap
        assert watts_of(energy) == pytest.approx(WATTS * (d + 1), rel=0.15), d
        assert m[f"rocprof.energy.source.gpu{d}"] == "counter"
        assert int(m[f"rocprof.energy.period_ns.gpu{d}"]) == pytest.approx(25e6, rel=0.2), d
    with open_db(db) as c:
        assert {r[0] for r in c.execute("SELECT category FROM metric_samples")} == {"rocm_smi"}


def test_energy_without_a_gpu_library_says_one_line_and_runs(tmp_path):
    db, err = record(tmp_path, {}, "--energy", seconds=0.2)
    lines = [ln for ln in err.splitlines() if ln.strip() and "results written to" not in ln]
    assert len(lines) == 1 and lines[0].startswith("rocprof: --energy: no GPU energy"), err
    assert "/nonexistent/libnvidia-ml.so.1" in lines[0]
    assert series(db) == {}
    assert not any(k.startswith("rocprof.energy.source") for k in meta(db))


# ---- with --process-freq ---------------------------------------------------------------------

def test_process_freq_alone_reads_the_counter_with_the_other_metrics(standins, tmp_path):
    db, _ = record(tmp_path, nvml_env(standins, 40), "--process-freq", "20", "--cpus", "none")
    s, m = series(db), meta(db)
    readings = int(m["rocprof.metrics.readings"])
    for d in (0, 1):
        energy = s[f"device_energy [{d}]"]
        assert len(energy) == len(s[f"device_busy_gfx [{d}]"]) == readings
        assert nondecreasing(energy)
        assert m[f"rocprof.energy.source.gpu{d}"] == "counter"
        # Read every 50 ms, a 40 ms counter is seen to change at every reading: that bound.
        assert int(m[f"rocprof.energy.period_ns.gpu{d}"]) == pytest.approx(50e6, rel=0.2)
    assert m["rocprof.energy.hz"] == "20"
    assert "process_rss" in s


def test_energy_with_process_freq_reads_energy_faster_and_the_rest_at_its_rate(standins, tmp_path):
    db, _ = record(tmp_path, nvml_env(standins, 40), "--energy", "--process-freq", "20",
                   "--cpus", "none")
    s, m = series(db), meta(db)
    readings = int(m["rocprof.metrics.readings"])
    busy = [v for _, v in s["device_busy_gfx [1]"]]
    # The energy ticks between full readings call nothing else: the stand-in's reading count
    # (kept by its utilisation call) follows the full readings alone.
    assert busy == [nvml_value("device_busy_gfx", 1, k) for k in range(readings)]
    assert len(s["device_energy [1]"]) >= 2 * readings  # ~2 counter reads per 40 ms update
    assert int(m["rocprof.energy.period_ns.gpu1"]) == pytest.approx(40e6, rel=0.2)
    assert m["rocprof.energy.hz"] == "100" and m["rocprof.metrics.hz"] == "20"
    assert int(m["rocprof.energy.readings"]) >= 3 * readings
