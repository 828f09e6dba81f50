"""Sets of half-open time intervals [start, end) as two sorted, disjoint int64 arrays, and the
measures the analyses need: union, intersection, and how much of a set lies inside each of many
windows (vectorised, so a 100k-kernel trace with 1,000 steps costs a few array passes)."""

from __future__ import annotations

import numpy as np


def union(starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """The merged set: sorted, disjoint intervals covering every [starts[i], ends[i])."""
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    keep = e > s
    s, e = s[keep], e[keep]
    if s.size == 0:
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # An interval opens a new block where it starts after everything before it has ended.
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    return s[first], reach[last]


def merge(*sets) -> tuple[np.ndarray, np.ndarray]:
    """Union of already merged sets."""
    return union(np.concatenate([a for a, _ in sets]), np.concatenate([b for _, b in sets]))


def intersect(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Intersection of two merged sets."""
    (as_, ae), (bs, be) = a, b
    if as_.size == 0 or bs.size == 0:
        return as_[:0], ae[:0]
    # Every pairwise overlap of two disjoint sorted lists, found by sweeping b's intervals that
    # can overlap each of a's (searchsorted gives the range), flattened without a Python loop.
    lo = np.searchsorted(be, as_, side="right")
    hi = np.searchsorted(bs, ae, side="left")
    counts = np.maximum(hi - lo, 0)
    if counts.sum() == 0:
        return as_[:0], ae[:0]
    ia = np.repeat(np.arange(as_.size), counts)
    offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    ib = np.repeat(lo, counts) + offs
    s = np.maximum(as_[ia], bs[ib])
    e = np.minimum(ae[ia], be[ib])
    keep = e > s
    return s[keep], e[keep]


def measure(a) -> int:
    s, e = a
    return int((e - s).sum())


def covered(a, w0, w1) -> np.ndarray:
    """For each window [w0[i], w1[i]), how much of merged set ``a`` lies inside it (ns)."""
    w0 = np.asarray(w0, dtype=np.int64)
    w1 = np.asarray(w1, dtype=np.int64)
    return _prefix(a, w1) - _prefix(a, w0)


def _prefix(a, t) -> np.ndarray:
    """Measure of ``a`` ∩ (-inf, t) for each t."""
    s, e = a
    if s.size == 0:
        return np.zeros(np.shape(t), dtype=np.int64)
    cum = np.concatenate([[0], np.cumsum(e - s)])
    i = np.searchsorted(e, t, side="right")  # intervals [0, i) end at or before t
    partial = np.where(i < s.size, np.maximum(0, t - s[np.minimum(i, s.size - 1)]), 0)
    return cum[i] + partial


def gaps(a, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The complement of merged set ``a`` inside [lo, hi)."""
    s, e = a
    inside = (e > lo) & (s < hi)
    s, e = np.clip(s[inside], lo, hi), np.clip(e[inside], lo, hi)
    gs = np.concatenate([[lo], e])
    ge = np.concatenate([s, [hi]])
    keep = ge > gs
    return gs[keep].astype(np.int64), ge[keep].astype(np.int64)
