"""Summaries: per-name duration statistics with rocprofv3's columns (core), combined in SQLite
(sql) or numpy (fastagg), the DataFrames bound to a connection (frames) and call-stack sample
tables (samples). Above :mod:`rocpd.io`; :mod:`rocpd.stats` is the stable facade over this and
:mod:`rocpd.counters`."""
