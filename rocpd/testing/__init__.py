"""Build rocpd databases for tests, notebooks and benchmarks with the real writer.

``DatabaseBuilder`` (builder.py) writes any rows a caller chooses through rocprof's C++ writer;
``build_ranks`` (ranks.py) builds one database per rank of a synchronous data-parallel run
with it.
"""

from .builder import CPU_AGENT, DatabaseBuilder, gpu_agent, new_guid
from .ranks import ALLREDUCE, RANK_KERNELS, build_ranks

__all__ = ["ALLREDUCE", "CPU_AGENT", "RANK_KERNELS", "DatabaseBuilder", "build_ranks", "gpu_agent",
           "new_guid"]
