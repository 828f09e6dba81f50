"""Counters: device and host metrics sampled over time (metrics, metric_plots), per-dispatch
hardware counters (kernel_metrics names them, pmc reads them) and what is derived from them: speed
of light (sol, sol_format, sol_example) and the roofline. Above :mod:`rocpd.io`; the summary
facade (:mod:`rocpd.stats`) and the report sit above this package."""
