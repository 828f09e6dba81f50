"""Empirical peaks (rocprof.peaks): each resource measured by a kernel that stresses it. The
measurements themselves run on the GPU host (tests/gpu/test_gpu_counters.py, make gpu-check);
here: the CUDA-core kernels compile to the FMA instructions they are meant to stress (nvcc,
where installed), the measuring code runs on real PyTorch tensors (on the CPU, a stand-in for
the device: the rates it gives are not GPU figures and are not checked), and every resource has
its line in `rocprof peaks`."""

import re
import shutil
import subprocess

import pytest
import torch
from rocprof import peaks


@pytest.mark.parametrize("key, ctype, stmt", peaks.FMA, ids=[k for k, _, _ in peaks.FMA])
def test_cuda_core_kernels_compile_to_independent_fma_chains(tmp_path, key, ctype, stmt):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed: the kernel source is compiled on the GPU host (NVRTC)")
    src = tmp_path / f"fma_{key}.cu"
    src.write_text(peaks.fma_source(key, ctype, stmt))
    p = subprocess.run([nvcc, "-ptx", "-arch=sm_90", str(src), "-o", str(tmp_path / "k.ptx")],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "cicc" in p.stderr + p.stdout:
        pytest.skip(f"nvcc cannot compile device code here: {p.stderr.strip()[:200]}")
    assert p.returncode == 0, p.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    op = {"fp64": r"fma\.rn\.f64", "fp32": r"fma\.rn\.f32", "fp16": r"fma\.rn\.f16"}[key]
    assert len(re.findall(op, ptx)) >= peaks.CHAINS, ptx[-2000:]
    assert f".entry fma_{key}" in ptx


def test_stress_measurements_run_on_real_tensors(monkeypatch):
    monkeypatch.setattr(peaks, "MIN_SECONDS", 0.005)
    cpu = torch.device("cpu")

    def sync():
        return None

    rate, how = peaks._l2(torch, cpu, 1 << 20, sync)
    assert rate > 0 and "L2-resident" in how
    rate, how = peaks._dram(torch, cpu, 64 << 20, sync)
    assert rate > 0 and "read+write" in how
    rate, how = peaks._gemm(torch, cpu, "float32", (64, 128), False, 1 << 30, sync)
    assert rate > 0 and re.fullmatch(r"torch matmul float32 (64|128)\^3", how)
    rate, how = peaks._gemm(torch, cpu, "float32", (1 << 20,), False, 1 << 30, sync)
    assert rate is None and how == "not measured: no size fits in memory"
    rate, how = peaks._gemm(torch, cpu, "no_such_dtype", (64,), False, 1 << 30, sync)
    assert rate is None and how.startswith("not measured: this PyTorch has no torch.no_such_dtype")


def test_better_of_two_measurements_is_kept():
    e = {"flops": {}, "method": {}}
    peaks._keep_best(e, "fp32", 5e13, "sgemm")
    peaks._keep_best(e, "fp32", 6e13, "fma kernel")
    peaks._keep_best(e, "fp32", None, "not measured: x")
    assert e == {"flops": {"fp32": 6e13}, "method": {"fp32": "fma kernel"}}
    peaks._keep_best(e, "fp16", None, "not measured: no NVRTC")
    assert e["method"]["fp16"] == "not measured: no NVRTC" and "fp16" not in e["flops"]


def test_every_resource_has_its_line():
    cache = {"GPU-1": {"device": "Test GPU", "measured": "now", "dram_bytes_per_second": 3e12,
                       "l2_bytes_per_second": 9e12,
                       "flops": {"tensor_bf16": 7.7e14, "tensor_int8": 1.5e15, "fp16": 3e13},
                       "method": {"fp64": "not measured: x", "l2": "sum over 128 rows"}}}
    text = peaks.format_table(cache)
    for key in peaks.KEYS:
        assert re.search(rf"^  {key}\s", text, re.M), key
    assert re.search(r"^  l2\s+9\.0 TB/s\s+sum over 128 rows$", text, re.M)
    assert re.search(r"^  tensor_int8\s+1\.5 POP/s", text, re.M)
    assert re.search(r"^  fp64\s+-\s+not measured: x$", text, re.M)
    # every precision speed of light shows is measured
    from rocshared import kernel_metrics

    assert {p.key for p in kernel_metrics.PRECISIONS} <= set(peaks.KEYS)
