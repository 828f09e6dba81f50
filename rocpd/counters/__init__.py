"""Counters: per-dispatch hardware counters (``--pmc``, ``--sol``; rocshared.kernel_metrics
names them, pmc reads them) and what is derived from them: speed of light (sol, sol_format,
sol_example) and the roofline. Metrics sampled over time are :mod:`rocpd.device_metrics`'.
Above :mod:`rocpd.io`; the summary tables (:mod:`rocpd.summary.stats`) and the report sit above."""
