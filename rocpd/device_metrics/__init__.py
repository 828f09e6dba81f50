"""Device and host metrics sampled over time (``rocprof run --process-freq``, rocprofiler-systems'
AMD SMI, CPU frequency and process samples): ``samples`` reads and summarises them, ``plots``
draws them against time. Per-kernel hardware counters are :mod:`rocpd.counters`'. Above
:mod:`rocpd.io`; the summary tables, the exports and the report sit above this package."""
