"""The groups of `rocprof run`'s options (python/rocprof/option_table.py: each row names its
group's key), in the order the help and the manual show them, with their titles and the
descriptions `--help-all` and the manual's options page print above them."""

from __future__ import annotations


class Group:
    __slots__ = ("key", "title", "description")

    def __init__(self, key: str, title: str, description: str | None = None):
        self.key = key
        self.title = title
        self.description = description


GROUPS = (
    Group("output", "output"),
    Group("tracing", "tracing (rocprofv3 names; each takes an optional BOOL)"),
    Group("counters", "hardware counters (serialise kernels: see below)"),
    Group("on_demand", "on-demand capture (rocprof ctl)"),
    Group("pc_sampling", "PC sampling (where inside a kernel the time goes: per instruction, "
          "stall reason and source line; read it with `rocpd pcsamples`)"),
    Group("gpu_metrics", "GPU hardware metrics over time (no kernel replay)",
          "The GPU's performance monitors read at a fixed rate while kernels run as usual (no "
          "replay, no serialisation): SM and tensor-pipe activity, issue, occupancy, DRAM, L2, "
          "PCIe and NVLink throughput, each a counter track per GPU (rocpd_info_pmc, "
          "rocpd_pmc_event), drawn under the kernels in the pftrace/json exports, summarised "
          "per step, kernel, ROCTx range and line by `rocpd gpumetrics`. NVIDIA: CUPTI's PM "
          "sampling (CUDA 12.6+, Turing or later); AMD: not written (rocprofiler-sdk's device "
          "counting service), unrun."),
    Group("sampling", "call-stack sampling (Python processes)"),
    Group("metrics", "device and host metrics over time (rocprof-sys's process sampling options)",
          "A thread of its own reads each GPU's utilisation, memory in use, power, energy "
          "counter, temperature, clocks, throttle reasons and PCIe/NVLink throughput (NVML on "
          "NVIDIA, AMD SMI or ROCm SMI on AMD) and, from /proc, each core's load and frequency "
          "and this process's RSS, "
          "page faults and CPU use; stored as sampled counters (rocpd_info_pmc, rocpd_pmc_event), "
          "shown as counter tracks in the pftrace/json exports, summarised by `rocpd summary` and "
          "plotted by `rocpd plot`."),
    Group("sites", "launch sites and CUDA graphs"),
    Group("collectives", "collectives (NCCL/RCCL)",
          "Each collective and send/recv call with its operation, datatype, count and bytes, "
          "communicator, root/peer, rank, stream, algorithm and protocol, stored as ROCm stores "
          "RCCL API calls (rocpd_region of category RCCL_API, arguments in rocpd_arg); `rocpd "
          "summary` and `rocpd ranks` add algorithm and bus bandwidth per operation and size. "
          "Through NCCL's profiler plugin interface (NCCL >= 2.27; older NCCL: collectives as "
          "kernels only, said by rocpd summary). AMD RCCL has the same interface: not yet run on "
          "AMD hardware."),
    Group("program", "the program"),
)
