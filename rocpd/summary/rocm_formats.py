"""The output formats of ROCm's summary form (rocpd.summary.rocm), where the command line can
name them without importing the tables' code (pandas)."""

FORMATS = ("console", "csv", "html", "json", "md", "pdf")
