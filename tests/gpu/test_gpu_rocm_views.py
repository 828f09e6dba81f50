"""ROCm's own view SQL over databases a CUPTI trace wrote (tests/rocm_views.py): every kernel,
copy, allocation, API region, ROCTx range and sample is visible through ROCm's views, with the
counts and durations ours give. Backward kernels are launched by autograd's threads, which
record nothing themselves: their thread rows must exist or ROCm's INNER JOINs drop them."""

import json
import sys

import pytest
from gpuutil import LIVE, REASON, ROOT, rocprof_run

sys.path.insert(0, str(ROOT / "tests"))
from rocm_views import compare, mismatches  # noqa: E402

pytestmark = pytest.mark.skipif(not LIVE, reason=f"CUPTI not live: {REASON}")
WORKLOAD = ROOT / "tests/gpu/workloads/torch_steps.py"


@pytest.mark.parametrize("flags", [[], ["--sys-trace"], ["--kernel-rename"]])
def test_rocm_views_see_every_record(tmp_path, flags):
    db, _ = rocprof_run(tmp_path, *flags, str(WORKLOAD), "--steps", "4")
    got = compare(db)
    print("rocm-views", " ".join(flags) or "(default)", json.dumps(got))
    assert got["kernels"][0][0] > 0
    if "--sys-trace" in flags:
        assert got["regions"][0][0] > 0 and got["memory_copies"][0][0] > 0
    assert mismatches(db) == {}


def test_name_hip_device_names_the_cuda_agent(tmp_path):
    """roctxNameHipDevice on NVIDIA: HIP's device ids are the CUDA ordinals, so device 0 is the
    agent with logical_index 0; the name lands in its user_name (applied at close too, since
    the agent's row is written when CUPTI first sees the device)."""
    import subprocess

    from gpuutil import env, query

    code = (
        "import torch, roctx, rocprof\n"
        f"with rocprof.profile(output_dir={str(tmp_path)!r}, output_file='n', kernel_trace=True):\n"
        "    roctx.nameHipDevice('trainer-gpu', 0)\n"
        "    (torch.ones(8, device='cuda') * 2).sum().item()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    rows = query(tmp_path / "n_results.db",
                 "SELECT user_name FROM rocpd_info_agent WHERE type = 'GPU' AND logical_index = 0")
    assert rows == [("trainer-gpu",)]
