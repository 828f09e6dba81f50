"""The AMD backend on real AMD hardware (never run yet: no AMD GPU is available to this
project). Skipped, with `rocprof info`'s reason, wherever the HSA backend is not live. On an AMD
host with ROCm < 6 (HIP 5.x callbacks) and PyTorch for ROCm:
    python -m pytest -q tests/gpu/amd
"""

from __future__ import annotations

import os
import sys

import pytest
import support

SCRIPT = """
import torch, roctx
x = torch.randn(1024, 1024, device="cuda")
with roctx.range("matmuls"):
    for _ in range(5):
        y = x @ x
torch.cuda.synchronize()
"""


compiled, live, reason = support.backend_status(
    "hsa", "not compiled into this build")
pytestmark = pytest.mark.skipif(not (compiled and live) or "ROCPROF_HSA_STANDIN" in os.environ,
                                reason=f"no AMD GPU tracing here: {reason}")


def test_torch_matmuls_are_traced_on_amd(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "mm.py"
    script.write_text(SCRIPT)
    r = support.run_rocprof("run", "-d", tmp_path / "out", "--kernel-trace", "--hip-trace",
                            "--memory-copy-trace", script, timeout=600)
    assert r.returncode == 0, r.stderr
    [db_path] = (tmp_path / "out").rglob("*_results.db")
    with support.open_db(db_path) as db:
        meta = dict(db.execute("SELECT tag, value FROM rocpd_metadata"))
        assert meta["rocprof.hsa.status"] == "on", meta
        kernels = db.execute("SELECT count(*), min(end - start) FROM rocpd_kernel_dispatch").fetchone()
        assert kernels[0] >= 5 and kernels[1] > 0
        in_range = db.execute("SELECT count(*) FROM rocpd_kernel_dispatch k JOIN rocpd_string s "
                              "ON s.id = k.region_name_id WHERE s.string = 'matmuls'").fetchone()[0]
        assert in_range >= 5
        hip = db.execute("SELECT count(*) FROM regions WHERE category = 'HIP_RUNTIME_API_EXT'")
        assert hip.fetchone()[0] > 0, "HIP API callbacks (ROCm < 6 only) recorded nothing"
    print(sys.version, meta.get("rocprof.hsa.runtime_library"))
