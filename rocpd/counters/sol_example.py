"""A ``rocprof run --sol`` profile to learn and test on without a GPU: what the capture writes for
three kernels on an H100 SXM (GH100) — a bf16 8192³ GEMM, a 1 GiB elementwise copy and a
layer norm — built through the real writer (:mod:`rocpd.testing`). The counter values are
chosen, not measured; they are in the proportions a real run has, and :data:`TRUTH` keeps the
inputs so tests can check ``rocpd sol`` against numbers worked out by hand.
"""

from __future__ import annotations

import json

from rocshared import kernel_metrics as m

from ..testing import DatabaseBuilder, gpu_agent

GPU_UUID = "GPU-5e1f0c3a-0000-4a1b-9c2d-000000000001"
SM_HZ, DRAM_HZ, L2_HZ = 1.755e9, 2.6e9, 1.755e9
SMS = 132
# The hardware's per-cycle peaks (whole GPU) in *.peak_sustained; the tensor ones as CUPTI reported
# them on an H100 (2026-11-23): with a sparse mode, the 2:4-sparse rate (kernel_metrics._DENSE).
PEAKS_PER_CYCLE = {
    m.DRAM_PEAK: 1288.0,                                         # bytes/DRAM cycle
    m.L2_PEAK: 5120.0,                                           # bytes/L2 cycle
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained": 8192.0 * SMS,
    "sm__ops_path_tensor_src_fp16.sum.peak_sustained": 8192.0 * SMS,
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum.peak_sustained": 4096.0 * SMS,
    "sm__ops_path_tensor_src_fp8.sum.peak_sustained": 16384.0 * SMS,
    "sm__ops_path_tensor_src_int8.sum.peak_sustained": 16384.0 * SMS,
    "sm__ops_path_tensor_src_fp64.sum.peak_sustained": 256.0 * SMS,
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 128.0 * SMS,
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": 64.0 * SMS,
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": 256.0 * SMS,
}
EMPIRICAL = {"dram_bytes_per_second": 3.05e12, "l2_bytes_per_second": 7.9e12,
             "flops": {"tensor_bf16": 7.7e14, "tensor_fp16": 7.7e14, "fp32": 5.0e13}}

N = 8192
COPY_BYTES = 1 << 30
# kernel -> (durations in ns, counters per dispatch)
KERNELS = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64": (
        [1_550_000, 1_560_000, 1_540_000],
        {"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 2.0 * N ** 3,
         m.DRAM_READ: 6.2e8, m.DRAM_WRITE: 1.342e8, m.L2_BYTES: 6.4e9,
         m.OCCUPANCY: 11.8, m.SM_THROUGHPUT: 78.5, m.MEM_THROUGHPUT: 41.0,
         m.DRAM_THROUGHPUT: 14.6, m.L2_THROUGHPUT: 47.0, m.TENSOR_ACTIVE: 76.1,
         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 1.2e7}),
    "vectorized_elementwise_kernel<copy_float>": (
        [690_000, 688_000, 692_000, 689_000],
        {m.DRAM_READ: float(COPY_BYTES), m.DRAM_WRITE: float(COPY_BYTES), m.L2_BYTES: 2.2e9,
         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": COPY_BYTES / 4,
         m.OCCUPANCY: 84.0, m.SM_THROUGHPUT: 12.0, m.MEM_THROUGHPUT: 93.0,
         m.DRAM_THROUGHPUT: 92.5, m.L2_THROUGHPUT: 31.0}),
    "layer_norm_kernel<float>": (
        [46_000, 45_500],
        {m.DRAM_READ: 6.71e7, m.DRAM_WRITE: 6.71e7, m.L2_BYTES: 1.9e8,
         "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 5.0e7,
         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 3.4e7,
         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 6.7e7,
         m.OCCUPANCY: 61.0, m.SM_THROUGHPUT: 38.0, m.MEM_THROUGHPUT: 80.0,
         m.DRAM_THROUGHPUT: 79.0, m.L2_THROUGHPUT: 36.0}),
}

TRUTH = {"sm_hz": SM_HZ, "dram_hz": DRAM_HZ, "l2_hz": L2_HZ, "peaks_per_cycle": PEAKS_PER_CYCLE,
         "kernels": KERNELS, "empirical": EMPIRICAL, "uuid": GPU_UUID}


def build(path, *, pid: int = 4242, with_empirical: bool = True) -> dict:
    """Write the example profile to ``path``; returns :data:`TRUTH`."""
    with DatabaseBuilder(path, pid=pid, command="python examples/sol_demo.py") as b:
        b.gpu(0, name="NVIDIA H100 80GB HBM3", model_name="sm_90", uuid=GPU_UUID,
              extdata={"compute_capability": "9.0", "multiprocessors": SMS,
                       "core_clock_khz": 1980000, "global_memory_bandwidth_kbps": 3352320000,
                       "max_warps_per_multiprocessor": 64})
        options = {"pmc": [], "sol": True}
        if with_empirical:
            options["empirical_peaks"] = {GPU_UUID: dict(EMPIRICAL, device="NVIDIA H100 80GB HBM3")}
        b.metadata("rocprof.options", json.dumps(options))
        b.metadata("rocprof.counters.metrics", " ".join(m.sol_metrics()))
        b.metadata("rocprof.counters.origin", "sol")
        b.metadata("rocprof.counters.serialized", "1")
        t = 1_000_000
        for name, (durations, values) in KERNELS.items():
            for d in durations:
                corr = b.next_correlation()
                b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", t, t + 3000, correlation_id=corr)
                # Values arrive before their dispatch, as they do in a session.
                per_dispatch = {m.DURATION: float(d), m.SM_CLOCK: SM_HZ, m.DRAM_CLOCK: DRAM_HZ,
                                m.L2_CLOCK: L2_HZ, **PEAKS_PER_CYCLE, **values}
                for counter, value in per_dispatch.items():
                    b.counter_value(corr, counter, value, agent=gpu_agent(0))
                b.kernel(name, t + 5000, t + 5000 + d, correlation_id=corr,
                         grid=(N * 8, 1, 1), block=(256, 1, 1))
                t += d + 20_000
    return TRUTH
