"""Launcher-side checks of hardware-counter names (``--pmc``), before the program starts: a name no
GPU generation CUPTI knows is a typo, reported in one line. Which names a particular GPU has is
only known once the program creates its CUDA context; the native side checks again there (and
says which names that GPU lacks)."""

from __future__ import annotations

import functools

from . import _core


@functools.lru_cache(maxsize=1)
def _known_bases() -> frozenset[str] | None:
    """Base metric names of every chip this CUPTI knows (no GPU needed); None when no CUPTI with
    counter support can be opened here (nothing to check against)."""
    if not hasattr(_core, "counters_chips"):
        return None
    try:
        chips = _core.counters_chips()
    except RuntimeError:
        return None
    names: set[str] = set()
    for chip in chips:
        try:
            names.update(m["name"] for m in _core.counters_chip(chip)["metrics"])
        except RuntimeError:  # a chip this host library lists but does not serve (GV11B)
            continue
    return frozenset(names) or None


def unknown_names(metrics: list[str]) -> str:
    """'' when every name could be a counter, else one line naming the ones that cannot."""
    known = _known_bases()
    if known is None:
        return ""
    bad = [n for n in metrics if n.split(".", 1)[0] not in known]
    if not bad:
        return ""
    return (f"{', '.join(repr(b) for b in bad)}: no NVIDIA GPU has such a counter (`rocprof avail` "
            "lists a GPU's counters; `rocprof avail --chip GH100` those of a chip)")
