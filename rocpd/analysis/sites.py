"""The user's line of a piece of work: the (site, function) columns parsed from its line_info JSON
text (``{"file": …, "line": …, "function": …}``), and the short form findings and reports show.

Backward work named by its forward op (``"backward_of": "aten::mm"``, rocprof._torch_observer)
has the forward op's line with BACKWARD after it (``/home/u/model.py:12 (backward)``): summaries
by line list a line's backward work as a row of its own, under the same file and line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

BACKWARD = " (backward)"


def _parse_site(text):
    """'file:line' and function of a line_info JSON text, or (None, None)."""
    if not text or text == "{}":
        return None, None
    try:
        d = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(d, dict) or not d.get("file"):
        return None, None
    line = d.get("line")
    site = f"{d['file']}:{line}" if line is not None else str(d["file"])
    return site + (BACKWARD if d.get("backward_of") else ""), d.get("function")


def sites_of(series):
    """Columns (site, function) for a Series of line_info texts, parsing each distinct text once
    (a cell without one, None or NaN, has neither)."""
    # A lookup per row into the parsed distinct texts, not a Python call per row; the cells
    # share their strings (an object column: pandas' str dtype would copy each).
    codes, distinct = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=False)
    parsed = [_parse_site(u) if isinstance(u, str) else (None, None) for u in distinct]
    out = []
    for k in (0, 1):
        table = np.empty(len(distinct), dtype=object)
        table[:] = [p[k] for p in parsed]
        out.append(pd.Series(table[codes], dtype=object, index=series.index))
    return out[0], out[1]


def short_site(site: str | None) -> str:
    """'train.py:42' from '/home/u/train.py:42' (the report's and findings' form); a backward
    site keeps its marker ('model.py:12 (backward)')."""
    if not site:
        return "(unknown)"
    path, _, line = site.rpartition(":")
    if not path:
        return site
    return f"{path.rsplit('/', 1)[-1]}:{line}"
