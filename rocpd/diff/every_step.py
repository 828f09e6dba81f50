"""Bounded runs (``rocprof run --max-size``): most steps keep only their summary row, so the diff's
tables compare the steps kept whole; this compares every step's time, from the summaries. The
interval of the difference of the mean step times is the normal one (a bounded run has thousands
of steps, where the mean's sampling distribution is normal; a bootstrap over millions of steps
would cost more than the whole diff)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ..analysis import bounded
from ..errors import RocpdError


def step_times(db, skip_steps: int = 0) -> np.ndarray | None:
    """Every step's time (ns) of the bounded parts of ``db``, each part's first ``skip_steps``
    left out; None where ``db`` has no bounded part (or a Dask connection: no per-step rows)."""
    if not bounded.facts(db):
        return None
    try:
        s = bounded.summaries(db)
    except RocpdError:
        return None
    if s.empty:
        return None
    s = s[s.groupby("guid").cumcount() >= skip_steps]
    return s["HostNs"].to_numpy(dtype=float)


def note(base, new, confidence: float) -> str | None:
    """One line comparing the two sides' every step, where both are bounded runs."""
    a, b = getattr(base, "every_step_ns", None), getattr(new, "every_step_ns", None)
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    ma, mb = float(a.mean()), float(b.mean())
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * math.sqrt(a.var(ddof=1) / len(a)
                                                                  + b.var(ddof=1) / len(b))
    d = mb - ma
    rel = (lambda x: 100 * x / ma) if ma else (lambda x: float("nan"))
    return (f"every step (the bounded runs' summaries, {len(a)} + {len(b)} steps): mean step time "
            f"{_t(ma)} -> {_t(mb)}, {rel(d):+.1f} % [{rel(d - half):+.1f}, {rel(d + half):+.1f}] "
            f"({confidence:.0%}); medians {_t(float(np.median(a)))} -> {_t(float(np.median(b)))}")


def _t(ns: float) -> str:
    return f"{ns / 1e3:,.1f} us" if abs(ns) < 1e6 else f"{ns / 1e6:,.3f} ms"
