"""examples/hip/vcopy.hip built with nvcc against HIP's nvidia_detail headers: the variant that
synchronises the host after every launch leaves larger gaps between kernels than the fixed one."""

import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from gpuutil import ROOT, native_run, query


def hip_include(tmp):
    """Debian's HIP headers (libamdhip64-dev), carried in .hipinc or from /usr/include,
    patched for CUDA 13 by programs/patch_hip_headers.py."""
    for base in (ROOT / ".hipinc", Path("/usr/include")):
        if (base / "hip/nvidia_detail").is_dir():
            dst = tmp / "hipinc"
            shutil.copytree(base / "hip", dst / "hip")
            return dst
    pytest.skip("HIP headers (libamdhip64-dev hip/nvidia_detail) not found")


def test_sync_variant_has_larger_launch_gaps(nvcc, tmp_path):
    inc = hip_include(tmp_path)
    src = ROOT / "examples/hip/vcopy.hip"
    cmd = [nvcc, "-O2", "-x", "cu", "-D__HIP_PLATFORM_NVIDIA__", f"-I{inc}", f"-I{ROOT / 'cpp/roctx/include'}",
           str(src), f"-L{ROOT / 'python/rocprof'}", "-lroctx64", "-o", str(tmp_path / "vcopy")]
    p = subprocess.run([sys.executable, str(ROOT / "tests/gpu/programs/patch_hip_headers.py"), str(inc), *cmd],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    db, _ = native_run(tmp_path, tmp_path / "vcopy", "200")
    gaps = {}
    for variant in ("sync", "fixed"):
        spans = query(db, "SELECT start, \"end\" FROM kernels WHERE roctx_range = ? ORDER BY start", variant)
        assert len(spans) == 200, (variant, len(spans))
        gaps[variant] = statistics.median(s1 - e0 for (_, e0), (s1, _) in zip(spans, spans[1:], strict=False))
    print("median launch gap ns:", gaps)
    assert gaps["sync"] > 2 * gaps["fixed"], gaps
