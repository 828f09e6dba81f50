"""Energy on a real GPU (rocprof run --energy): a bf16 GEMM phase, a sleep phase and a copy
phase in ROCTx ranges. The ranges' joules add up to the device's own energy over them, and the
GEMM draws more power than the copies, which draw more than the idle GPU.

    python -m pytest -q -s tests/gpu/test_gpu_energy.py

prints the figures (joules, watts per phase, the meter) for RESULTS.md."""

import json

import numpy as np
import pytest
from gpuutil import ROOT, load_json_line, rocprof_run

torch = pytest.importorskip("torch")
SECONDS = 5
PHASES = ("gemm", "sleep", "copy")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    tmp = tmp_path_factory.mktemp("energy")
    db, p = rocprof_run(tmp, "--energy", "--gpus", "0",
                        str(ROOT / "tests/gpu/workloads/gemm_sleep_copy.py"),
                        "--seconds", str(SECONDS), check=False)
    if p.returncode != 0 and "--energy" in p.stderr and "unrecognized" in p.stderr:
        pytest.skip("this rocprof run has no --energy option")
    assert p.returncode == 0, p.stdout + p.stderr
    return str(db), load_json_line(p.stdout)


def test_ranges_add_up_to_the_device_energy_and_order_by_power(run):
    import rocpd
    from rocpd.energy import meter

    db, facts = run
    with rocpd.connect(db) as conn:
        meters = meter.read(conn)
        df = rocpd.energy(conn, by="range").set_index("range")
        kernels = rocpd.energy(conn, by="kernel")
        (lo, hi), = conn.execute("SELECT MIN(start), MAX(\"end\") FROM regions WHERE"
                                 " json_extract(extdata, '$.message') IN ('gemm', 'sleep', 'copy')"
                                 ).fetchall()
        raw = conn.execute(
            "SELECT timestamp, value, metric FROM metric_samples WHERE metric IN"
            " ('device_energy', 'device_power') ORDER BY timestamp").fetchall()
    (m,) = [x for x in meters if x.gpu == 0]
    print(json.dumps({"workload": facts, "meter": m.describe(),
                      "phases": {n: {"J": df.loc[n, "Joules"], "W": df.loc[n, "Watts"],
                                     "pm_J": df.loc[n, "PlusMinusJoules"]} for n in PHASES},
                      "kernels": kernels.head(5)[["kernel", "Joules", "Watts"]].to_dict("records")}))
    # the device's own figure over the three phases, from its readings (not our curve)
    t = np.array([r[0] for r in raw if r[2] == ("device_energy" if m.source == "counter"
                                                 else "device_power")], dtype=float)
    v = np.array([r[1] for r in raw if r[2] == ("device_energy" if m.source == "counter"
                                                 else "device_power")], dtype=float)
    inside = (t >= lo) & (t <= hi)
    if m.source == "counter":
        device = float(v[inside].max() - v[inside].min())
    else:
        w, ts = v[inside], t[inside]
        device = float(((w[1:] + w[:-1]) / 2 * np.diff(ts)).sum() / 1e9)
    ranges = float(sum(df.loc[n, "Joules"] for n in PHASES))
    assert ranges == pytest.approx(device, rel=0.02), (ranges, device)
    watts = {n: float(df.loc[n, "Watts"]) for n in PHASES}
    assert watts["gemm"] > watts["copy"] > watts["sleep"], watts
