"""The user's line of a piece of work: the (site, function) columns parsed from its line_info JSON
text (``{"file": …, "line": …, "function": …}``), and the short form findings and reports show."""

from __future__ import annotations

import json


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
    return f"{d['file']}:{line}" if line is not None else str(d["file"]), d.get("function")


def sites_of(series):
    """Columns (site, function) for a Series of line_info texts, parsing each distinct text once."""
    import pandas as pd

    uniq = pd.unique(series.fillna("{}"))
    parsed = {u: _parse_site(u) for u in uniq}
    filled = series.fillna("{}")
    return (filled.map(lambda u: parsed[u][0]).astype(object),
            filled.map(lambda u: parsed[u][1]).astype(object))


def short_site(site: str | None) -> str:
    """'train.py:42' from '/home/u/train.py:42' (the report's and findings' form)."""
    if not site:
        return "(unknown)"
    path, _, line = site.rpartition(":")
    if not path:
        return site
    return f"{path.rsplit('/', 1)[-1]}:{line}"
