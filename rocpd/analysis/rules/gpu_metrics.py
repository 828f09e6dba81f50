"""Rules on the GPUs' hardware metrics over time (`rocprof run --gpu-metrics`, CUPTI PM
sampling; rocpd.device_metrics.gpu_metrics): GEMM-heavy work that leaves the tensor pipes
mostly idle, and ROCTx phases (steps, ranges) bound by DRAM bandwidth."""

from __future__ import annotations

import re

from ..findings import Finding, _pct

# GEMM kernels by name: cuBLAS/cuBLASLt (gemm, nvjet, sm90_xmma), CUTLASS, Triton matmuls.
GEMM = re.compile(r"gemm|matmul|nvjet|cutlass|xmma|wgmma|hmma", re.IGNORECASE)
GEMM_SHARE = 0.5     # GEMM kernels at least this share of a GPU's kernel time: GEMM-heavy
LOW_TENSOR = 30.0    # ... and their tensor pipes busy less than this (% of their time): an issue
DRAM_BOUND = 70.0    # a phase with DRAM throughput at or above this (% of peak) ...
DRAM_TENSOR = 20.0   # ... and its tensor pipes below this: bound by memory bandwidth
PHASE_SHARE = 0.10   # only phases of at least this share of the run's ranged time


def low_tensor_activity(a) -> list[Finding]:
    if a.gpu_metrics is None:
        return []
    k = a.gpu_metrics.table(a.processes, "kernel")
    if k.empty or "TensorPercent" not in k.columns:
        return []
    out = []
    for (proc, gpu), g in k.groupby(["process", "gpu"], sort=True):
        gemm = g[g["kernel"].str.contains(GEMM)]
        total = float(g["Seconds"].sum())
        secs = float(gemm["Seconds"].sum())
        if total <= 0 or secs / total < GEMM_SHARE:
            continue
        tensor = float((gemm["TensorPercent"] * gemm["Seconds"]).sum() / secs)
        if not tensor < LOW_TENSOR:
            continue
        top = gemm.sort_values("Seconds", ascending=False).head(3)
        ev = [f"{proc} GPU {gpu}: GEMM kernels {_pct(secs / total)} of the kernel time, tensor "
              f"pipes {tensor:.0f} % busy during them"]
        ev += [f"{r.kernel}: {r.Seconds * 1e3:.1f} ms, tensor {r.TensorPercent:.0f} %"
               for r in top.itertuples()]
        ev.append(f"threshold: GEMM kernels >= {_pct(GEMM_SHARE)} of the kernel time with tensor "
                  f"pipes below {LOW_TENSOR:.0f} %")
        out.append(Finding(
            "low-tensor-activity",
            f"GEMM-heavy work keeps the tensor pipes only {tensor:.0f} % busy",
            "the matrix multiplies run mostly off the tensor cores or starve them: use bf16/fp16 "
            "(torch.autocast) or TF32 for fp32 (torch.backends.cuda.matmul.allow_tf32), shapes "
            "that are multiples of 16, larger batches or fused GEMMs; `rocpd gpumetrics DB --by "
            "kernel` lists each kernel's tensor activity",
            (LOW_TENSOR - tensor) / 100.0 * secs / total, ev))
    return out


def bandwidth_bound(a) -> list[Finding]:
    if a.gpu_metrics is None:
        return []
    r = a.gpu_metrics.table(a.processes, "range")
    # Against the measured peak (`rocprof peaks`) where there is one, else the hardware's.
    col = "DramPeakPercent" if "DramPeakPercent" in r.columns else "DramPercent"
    if r.empty or col not in r.columns:
        return []
    total = float(r["Seconds"].sum())
    tensor = r["TensorPercent"] if "TensorPercent" in r.columns else 0.0
    hit = r[(r[col] >= DRAM_BOUND) & (tensor < DRAM_TENSOR)
            & (r["Seconds"] >= PHASE_SHARE * total)]
    if hit.empty or total <= 0:
        return []
    hit = hit.sort_values("Seconds", ascending=False)
    share = float(hit["Seconds"].sum()) / total
    peak = "of measured peak" if col == "DramPeakPercent" else "of peak"
    ev = [f"{x.process} GPU {x.gpu} range {x.range!r}: DRAM {getattr(x, col):.0f} % {peak}, tensor "
          f"{getattr(x, 'TensorPercent', float('nan')):.0f} %, {x.Seconds:.3f} s over {x.Count} "
          "instance(s)" for x in hit.head(3).itertuples()]
    ev.append(f"threshold: DRAM >= {DRAM_BOUND:.0f} % of peak with tensor pipes below "
              f"{DRAM_TENSOR:.0f} %, in ranges of >= {_pct(PHASE_SHARE)} of the ranged time")
    return [Finding(
        "bandwidth-bound",
        f"{len(hit)} ROCTx phase(s) ({_pct(share)} of the ranged time) are bound by DRAM bandwidth",
        "these phases move memory rather than compute: fuse elementwise work (torch.compile), "
        "avoid copies and dtype conversions, keep data in lower precision; past ~80 % of peak "
        "only less traffic helps",
        share * 0.5, ev)]


RULES = (low_tensor_activity, bandwidth_bound)
