"""AMD PC sampling through rocprofiler-sdk on real AMD hardware (never run yet: no AMD GPU is
available to this project). Skipped, with `rocprof info`'s reason, wherever the rocprofiler-sdk
backend is not live. On an MI200 or newer host with ROCm >= 6.2, a build with its headers and
PyTorch for ROCm:
    python -m pytest -q tests/gpu/amd/test_amd_pc_sampling_hardware.py
"""

from __future__ import annotations

import os

import pytest
import support

SCRIPT = """
import torch
x = torch.randn(2048, 2048, device="cuda")
for _ in range(20):
    y = x @ x
torch.cuda.synchronize()
"""


compiled, live, reason = support.backend_status(
    "rocprofiler-sdk-pc-sampling", "not compiled into this build (no rocprofiler-sdk headers)")
pytestmark = pytest.mark.skipif(not (compiled and live) or "ROCPROF_SDK_STANDIN" in os.environ,
                                reason=f"no AMD PC sampling here: {reason}")


def test_host_trap_samples_name_the_matmul_dispatches(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "mm.py"
    script.write_text(SCRIPT)
    r = support.run_rocprof("run", "-d", tmp_path / "out", "--pc-sampling-method", "host_trap",
                            "--pc-sampling-unit", "time", "--pc-sampling-interval", "10", script,
                            timeout=600)
    assert r.returncode == 0, r.stderr
    [db_path] = (tmp_path / "out").rglob("*_results.db")
    with support.open_db(db_path) as db:
        meta = dict(db.execute("SELECT tag, value FROM rocpd_metadata"))
        assert meta["rocprof.pc_sampling.status"] == "on", meta
        total, joined, unknown = db.execute(
            "SELECT count(*), sum(d.id IS NOT NULL), sum(p.kernel_name = '(unknown kernel)') FROM "
            "pc_samples p LEFT JOIN rocpd_kernel_dispatch d ON d.dispatch_id = p.dispatch_id"
        ).fetchone()
    assert total > 0, r.stderr
    assert joined >= 0.9 * total and unknown == 0, (total, joined, unknown, meta)
    print(meta["rocprof.pc_sampling.period"], meta["rocprof.pc_sampling.dropped"])
