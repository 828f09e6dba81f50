"""Where the empirical peaks of each GPU are kept: ``rocprof peaks`` (and ``rocprof run --sol``)
measure and write them, ``rocpd sol`` reads them."""

from __future__ import annotations

import os


def cache_path() -> str:
    """Where `rocprof peaks` keeps each GPU's measured peaks ($XDG_CACHE_HOME or ~/.cache)."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "rocprof", "peaks.json")
