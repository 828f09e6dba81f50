"""The stats CSV files as rocprofv3 writes them (rocprofiler-sdk's stats_formatter): the header
and names quoted, each number in its column's format. rocpd.summary.stats writes its tables
through :func:`write_stats_frame`."""

from __future__ import annotations

import math

from ..io.output_file import open_output


# rocprofiler-sdk source/lib/output/statistics.cpp (stats_formatter): a float above 0.01 is written
# fixed with 6 decimals, else scientific with 8; a Percentage >= 1 fixed with 2 decimals, above
# 0.01 fixed with 4, else scientific with 3. Integers (calls, total, min, max) as they are.
def format_stat(value) -> str:
    v = float(value)
    return f"{v:.6f}" if v > 1e-2 else f"{v:.8e}"


def format_percentage(value) -> str:
    v = float(value)
    if v >= 1.0:
        return f"{v:.2f}"
    return f"{v:.4f}" if v > 1e-2 else f"{v:.3e}"


_FLOAT_COLS = {"AverageNs": format_stat, "StdDev": format_stat, "Percentage": format_percentage}


def _cell(col: str, value) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if col in _FLOAT_COLS:
        return _FLOAT_COLS[col](value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def write_stats_frame(df, path: str) -> None:
    """One stats CSV as rocprofv3 writes it: header and names quoted, numbers as stats_formatter."""
    cols = list(df.columns)
    with open_output(path, newline="") as fh:
        fh.write(",".join(_cell("", c) for c in cols) + "\n")
        for row in df.itertuples(index=False, name=None):
            fh.write(",".join(_cell(c, v) for c, v in zip(cols, row, strict=True)) + "\n")
