"""Summaries: per-name duration statistics with rocprofv3's columns (core), combined in SQLite
(sql) or numpy (fastagg), the DataFrames bound to a connection (frames), call-stack sample
tables (samples) and GPU time per nn.Module of a --module-trace run (by_module). Above
:mod:`rocpd.io`; :mod:`rocpd.summary.stats` is the stable facade over this and :mod:`rocpd.counters`."""
