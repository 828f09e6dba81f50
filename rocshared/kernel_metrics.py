"""Hardware-counter names: what ``rocprof run --pmc NAME`` and ``--sol`` collect on NVIDIA GPUs
(CUPTI metric names), and how ``rocpd sol`` turns those values into FLOP/s, bandwidth and % of
peak. Pure data and pure functions: no GPU, no CUPTI.

Names a rocprofv3 user passes (``--pmc SQ_WAVES FETCH_SIZE``) resolve to the nearest NVIDIA
metric (:data:`ALIASES`); the database then holds the metric actually measured, under its own
name and units (``FETCH_SIZE`` is KiB on AMD, ``dram__bytes_read.sum`` is bytes: no hidden
scaling). Each mapping is checked against CUPTI's own metric tables by the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# rocprofv3 (AMD) counter name -> (NVIDIA metric, what it measures there).
ALIASES: dict[str, tuple[str, str]] = {
    "GRBM_COUNT": ("gpc__cycles_elapsed.max", "GPU clock cycles elapsed during the kernel"),
    "GRBM_GUI_ACTIVE": ("gpc__cycles_elapsed.max", "GPU busy cycles (a profiled kernel keeps it busy)"),
    "SQ_WAVES": ("sm__warps_launched.sum", "warps launched (AMD: wavefronts)"),
    "SQ_BUSY_CYCLES": ("sm__cycles_active.max", "cycles with at least one warp in flight"),
    "SQ_WAVE_CYCLES": ("sm__warps_active.sum", "warp-cycles in flight"),
    "SQ_INSTS": ("smsp__inst_executed.sum", "warp instructions executed"),
    "SQ_INSTS_VALU": ("sm__inst_executed_pipe_fma.sum", "FMA-pipe warp instructions (nearest to VALU)"),
    "SQ_INSTS_LDS": ("sm__sass_inst_executed_op_shared_ld.sum", "shared-memory load instructions"),
    "SQ_INSTS_VMEM_RD": ("smsp__sass_inst_executed_op_global_ld.sum", "global load instructions"),
    "FETCH_SIZE": ("dram__bytes_read.sum", "bytes read from DRAM (AMD counts KiB)"),
    "WRITE_SIZE": ("dram__bytes_write.sum", "bytes written to DRAM (AMD counts KiB)"),
    "TCC_HIT_sum": ("lts__t_sectors_lookup_hit.sum", "L2 sector lookups that hit"),
    "TCC_MISS_sum": ("lts__t_sectors_lookup_miss.sum", "L2 sector lookups that missed"),
    "TCC_REQ_sum": ("lts__t_requests.sum", "L2 requests"),
    "TCC_HIT": ("lts__t_sectors_lookup_hit.sum", "L2 sector lookups that hit"),
    "TCC_MISS": ("lts__t_sectors_lookup_miss.sum", "L2 sector lookups that missed"),
    "TCC_EA0_RDREQ_sum": ("lts__t_sectors_op_read.sum", "L2 read sectors"),
    "TCC_EA0_WRREQ_sum": ("lts__t_sectors_op_write.sum", "L2 write sectors"),
    "TCP_TOTAL_CACHE_ACCESSES_sum": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                     "L1 global load sectors"),
    "SQ_LDS_BANK_CONFLICT": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
                             "shared-memory bank conflicts"),
    "OccupancyPercent": ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy, %"),
    "MemUnitBusy": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                    "memory pipeline throughput, % of peak"),
    "VALUBusy": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput, % of peak"),
}

_NAME = re.compile(r"^[A-Za-z0-9_.]+$")


def resolve(names) -> tuple[list[str], dict[str, str]]:
    """``--pmc`` names -> (CUPTI metric names to collect, {alias: metric} for the ones mapped).
    Names that are not aliases are taken as CUPTI names (``dram__bytes_read.sum``); duplicates
    are collected once. A malformed name raises ValueError naming it."""
    out: list[str] = []
    mapped: dict[str, str] = {}
    for raw in names:
        for name in str(raw).replace(",", " ").split():
            if not _NAME.match(name):
                raise ValueError(f"--pmc: {name!r} is not a counter name (letters, digits, '_' and"
                                 " '.' only)")
            metric = ALIASES.get(name, (name, ""))[0]
            if metric != name:
                mapped[name] = metric
            if metric not in out:
                out.append(metric)
    return out, mapped


# ---- speed of light ------------------------------------------------------------------------

@dataclass(frozen=True)
class Precision:
    """A kind of arithmetic: the counters whose weighted sum is its FLOP count (ops for int8),
    and the per-cycle peak metric(s) of the same path. ``alternatives``: groups of
    (metric, weight); the first group the database has is used (GPU generations name the same
    path differently: Hopper's ``src_fp16`` is Ampere's ``src_fp16_dst_fp16`` +
    ``src_fp16_dst_fp32``)."""

    key: str
    label: str
    tensor: bool
    alternatives: tuple[tuple[tuple[str, float], ...], ...]
    peak_metrics: tuple[str, ...]   # per-cycle peaks (max is taken); x peak_factor x SM clock
    peak_factor: float = 1.0
    unit: str = "FLOP/s"


def _sass(op: str) -> str:
    return f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"


def _tensor(src: str) -> str:
    return f"sm__ops_path_tensor_src_{src}.sum"


# Tensor-path "math ops" count each multiply and each add (an FMA is 2): FLOPs, as Nsight
# Compute's tensor roofline reads them. Scalar FMAs are one thread instruction: weight 2.
# The per-cycle peaks of the precisions that have a 2:4 structured-sparse mode are the sparse
# rate: measured on an H100 (2026-11-23), bf16 1,081,344 ops/clk for 132 SMs = 8,192 per SM,
# where NVIDIA's dense figure is 4,096 (and FP64, which has no sparse mode, gives its dense 256).
# Dense matmuls are measured against the dense roof: those peaks count half (_DENSE).
_DENSE = 0.5
PRECISIONS: tuple[Precision, ...] = (
    Precision("tensor_fp64", "FP64 tensor", True, (((_tensor("fp64"), 1.0),),),
              (_tensor("fp64") + ".peak_sustained",)),
    Precision("tensor_tf32", "TF32 tensor", True, (((_tensor("tf32_dst_fp32"), 1.0),),),
              (_tensor("tf32_dst_fp32") + ".peak_sustained",), peak_factor=_DENSE),
    Precision("tensor_bf16", "BF16 tensor", True, (((_tensor("bf16_dst_fp32"), 1.0),),),
              (_tensor("bf16_dst_fp32") + ".peak_sustained",), peak_factor=_DENSE),
    Precision("tensor_fp16", "FP16 tensor", True,
              (((_tensor("fp16"), 1.0),),
               ((_tensor("fp16_dst_fp16"), 1.0), (_tensor("fp16_dst_fp32"), 1.0))),
              (_tensor("fp16") + ".peak_sustained", _tensor("fp16_dst_fp32") + ".peak_sustained",
               _tensor("fp16_dst_fp16") + ".peak_sustained"), peak_factor=_DENSE),
    Precision("tensor_fp8", "FP8 tensor", True,
              (((_tensor("fp8"), 1.0),),
               ((_tensor("fp4_fp6_fp8_dst_fp16"), 1.0), (_tensor("fp4_fp6_fp8_dst_fp32"), 1.0))),
              (_tensor("fp8") + ".peak_sustained",
               _tensor("fp4_fp6_fp8_dst_fp32") + ".peak_sustained"), peak_factor=_DENSE),
    Precision("tensor_int8", "INT8 tensor", True, (((_tensor("int8"), 1.0),),),
              (_tensor("int8") + ".peak_sustained",), unit="OP/s", peak_factor=_DENSE),
    Precision("fp64", "FP64", False,
              (((_sass("dadd"), 1.0), (_sass("dmul"), 1.0), (_sass("dfma"), 2.0)),),
              (_sass("dfma") + ".peak_sustained",), peak_factor=2.0),
    Precision("fp32", "FP32", False,
              (((_sass("fadd"), 1.0), (_sass("fmul"), 1.0), (_sass("ffma"), 2.0)),),
              (_sass("ffma") + ".peak_sustained",), peak_factor=2.0),
    Precision("fp16", "FP16", False,
              (((_sass("hadd"), 1.0), (_sass("hmul"), 1.0), (_sass("hfma"), 2.0)),),
              (_sass("hfma") + ".peak_sustained",), peak_factor=2.0),
)

DURATION = "gpu__time_duration.sum"            # ns, as the counters saw the kernel
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"     # Hz while the kernel ran
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
L2_CLOCK = "lts__cycles_elapsed.avg.per_second"
DRAM_READ, DRAM_WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"
L2_BYTES = "lts__t_bytes.sum"
DRAM_PEAK = "dram__bytes.sum.peak_sustained"       # bytes per DRAM cycle, whole GPU
L2_PEAK = "lts__t_bytes.sum.peak_sustained"        # bytes per L2 cycle
SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
L2_THROUGHPUT = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
TENSOR_ACTIVE = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"


def sol_metrics() -> list[str]:
    """The ``--sol`` counter set (rocprof-compute's "Speed-of-Light" panel in NVIDIA terms). Every
    name is optional ("?name"): the native side leaves out what the GPU's chip does not have."""
    names = [DURATION, SM_CLOCK, DRAM_CLOCK, L2_CLOCK, DRAM_READ, DRAM_WRITE, L2_BYTES, DRAM_PEAK,
             L2_PEAK, SM_THROUGHPUT, MEM_THROUGHPUT, DRAM_THROUGHPUT, L2_THROUGHPUT, OCCUPANCY,
             TENSOR_ACTIVE]
    for p in PRECISIONS:
        for group in p.alternatives:
            names += [m for m, _ in group]
        names += list(p.peak_metrics)
    return ["?" + n for n in dict.fromkeys(names)]
