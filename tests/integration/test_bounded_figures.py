"""A bounded run's per-step figures beyond its own records (rocprof run --max-size,
docs/long-runs.md): the GPU energy of every step, from the device energy counters' samples
(test-only NVML stand-in, tests/standins/), and the device memory allocated and live at its peak
in every step (the caching allocator's trace hook through its stand-in), in the summaries of
steps kept whole and of steps only summarised alike. Real runs, real SQLite files."""

from __future__ import annotations

import statistics
import subprocess
import sys

import pytest
from metrics_standins import build
from support import WORKLOADS, _env, open_db, run_rocpd, run_rocprof

MiB = 1 << 20
WATTS = 100.0
ABSENT = {"ROCPROF_TEST_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
          "ROCPROF_TEST_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so",
          "ROCPROF_TEST_AMD_SMI_LIBRARY": "/nonexistent/libamd_smi.so"}


def summaries(db):
    with open_db(db) as c:
        return c.execute("SELECT step, start, \"end\", detail, energy_j, mem_alloc_bytes, "
                         "mem_peak_bytes FROM rocprof_step_summary ORDER BY step").fetchall()


def test_every_step_has_its_energy_from_the_counters(tmp_path_factory):
    libs = build(tmp_path_factory.mktemp("standins"))
    if not libs:
        pytest.skip("no C compiler on PATH to build the test-only stand-in libraries")
    tmp = tmp_path_factory.mktemp("energy")
    env = _env({**ABSENT, "ROCPROF_TEST_NVML_LIBRARY": libs["nvml"],
                "ROCPROF_STANDIN_NVML_DEVICES": "2", "ROCPROF_STANDIN_ENERGY_W": str(WATTS),
                "ROCPROF_STANDIN_ENERGY_MS": "20", "ROCPROF_STANDIN_ENERGY_DEVICES": "2"})
    for var in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        env.pop(var, None)
    r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp), "-o", "e",
                        "--energy", "--max-size", "2MB", str(WORKLOADS / "roctx_steps.py"), "40",
                        "--sleep-ms", "50", "--slow", "20"],
                       env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    rows = summaries(tmp / "e_results.db")
    assert [x[0] for x in rows] == list(range(40))
    # The stand-in's device d draws WATTS * (d + 1): a step's energy is 3 * WATTS * its seconds.
    ratio = [x[4] / (3 * WATTS * (x[2] - x[1]) / 1e9) for x in rows[1:-1]]
    assert all(x[4] is not None for x in rows)
    assert statistics.median(ratio) == pytest.approx(1.0, rel=0.1), ratio
    slow = rows[20]  # 250 ms instead of 50: five times the energy
    assert slow[4] == pytest.approx(3 * WATTS * (slow[2] - slow[1]) / 1e9, rel=0.2), slow
    assert {x[3] for x in rows} == {0, 1}  # kept whole and summarised steps alike
    assert all(x[5] is None and x[6] is None for x in rows)  # no memory trace: NULL
    # `rocpd summary` names the slowest step with its energy.
    out = run_rocpd("summary", tmp / "e_results.db").stdout
    step20 = next(ln for ln in out.splitlines() if ln.strip().startswith("step 20:"))
    assert f"{slow[4]:.3g} J" in step20, out


def test_every_step_has_its_allocations_and_peak(tmp_path):
    pytest.importorskip("torch")
    from rocprof.capture import autograd_sites

    why = autograd_sites.observer_unavailable()
    if why:
        pytest.skip(why)
    r = run_rocprof("run", "-d", tmp_path, "-o", "m", "--memory-allocation-trace", "--max-size",
                    "2MB", WORKLOADS / "torch_alloc_steps.py", 30, "--leak-at", 10, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = summaries(tmp_path / "m_results.db")
    assert [x[0] for x in rows] == list(range(30))
    assert all(x[4] is None for x in rows)  # no --energy: NULL
    # Each step allocates 2 MiB (step 10 also the 4 MiB it keeps); live at its peak: its own
    # 2 MiB over what earlier steps left (4 MiB from step 10 on).
    assert [x[5] for x in rows] == [6 * MiB if i == 10 else 2 * MiB for i in range(30)]
    assert [x[6] for x in rows] == [(2 if i < 10 else 6) * MiB for i in range(30)]
    # The analysis's step table carries them for every step, kept whole or not.
    import rocpd
    import rocpd.analysis

    steps = rocpd.analysis.analyze(rocpd.connect(str(tmp_path / "m_results.db"))).steps
    assert steps["MemPeakBytes"].tolist() == [x[6] for x in rows]
