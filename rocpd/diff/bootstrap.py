"""The change of a time per step between two runs, with a confidence interval from the
step-to-step spread: a percentile bootstrap of the difference of the two means, the steps of
each run resampled with replacement (the runs are independent: step k of one is no twin of step
k of the other). The resampling weights are drawn once per comparison from a seeded generator,
so the same databases give the same intervals, and every table of one diff shares them.

A change is *significant* when its interval excludes zero and it is large enough to matter:
at least ``min_change`` of the larger of the two times (a kernel 1 % slower is within what
clocks and placement move between two runs, which the steps of one run do not show) and at
least ``min_share`` of a baseline step (the host's own pace moves the idle gaps of two runs of
one program by a few µs each).

GPU idle is the step's time minus the GPU's work: it follows the host's pace (how fast Python
reaches the next launch, when a wait returns, a collection or the OS now and then), which two
runs of one unchanged program do not share: its mean per step can double between them (on an
H100, 0.055 to 0.111 ms in steps of a few ms) while each run's steps agree with each other. So a
change that is mostly GPU idle (its idle part larger than the rest: an idle row, the idle phase,
a line whose change is its idle) counts only from ``min_idle`` of a baseline step, by default as
much as the step time itself must change to count (``min_change``): an idle change smaller than
that is not what made the step slower. Idle that a new wait brings (a sync that was not there)
is not host pace: it is judged as work is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import RocpdError

CHUNK = 512  # rows resampled at a time: bounds memory at CHUNK x resamples floats


@dataclass(frozen=True)
class Settings:
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    min_change: float = 0.05
    min_share: float = 0.005
    min_idle: float = 0.05

    def check(self) -> Settings:
        if not 0.5 <= self.confidence < 1:
            raise RocpdError(f"confidence {self.confidence}: give a level in [0.5, 1), e.g. 0.95")
        if self.resamples < 100:
            raise RocpdError(f"resamples {self.resamples}: at least 100 (default 2000)")
        if self.min_change < 0 or self.min_share < 0 or self.min_idle < 0:
            raise RocpdError("min_change, min_share and min_idle must not be negative")
        return self


class Resampler:
    """Bootstrap weights for ``na`` baseline and ``nb`` new steps."""

    def __init__(self, na: int, nb: int, settings: Settings):
        self.na, self.nb, self.s = na, nb, settings
        self.enough = na >= 2 and nb >= 2
        rng = np.random.default_rng(settings.seed)
        r = settings.resamples
        self.wa = rng.multinomial(na, np.full(na, 1.0 / na), size=r).T / na if na else None
        self.wb = rng.multinomial(nb, np.full(nb, 1.0 / nb), size=r).T / nb if nb else None

    def compare(self, a: np.ndarray, b: np.ndarray, step_ns: float, idle=None) -> dict:
        """Columns for rows of per-step values ``a`` (k x na) and ``b`` (k x nb); ``idle``: the
        change of each row's host-paced GPU idle (k; None: none), which sets its floor."""
        a = np.asarray(a, dtype=float).reshape(-1, self.na)
        b = np.asarray(b, dtype=float).reshape(-1, self.nb)
        base = a.mean(axis=1) if self.na else np.zeros(len(a))
        new = b.mean(axis=1) if self.nb else np.zeros(len(b))
        delta = new - base
        lo = np.full(len(a), np.nan)
        hi = np.full(len(a), np.nan)
        if self.enough:
            q = [(1 - self.s.confidence) / 2, 1 - (1 - self.s.confidence) / 2]
            for i in range(0, len(a), CHUNK):
                d = b[i:i + CHUNK] @ self.wb - a[i:i + CHUNK] @ self.wa
                lo[i:i + CHUNK], hi[i:i + CHUNK] = np.quantile(d, q, axis=1)
        excludes = (lo > 0) | (hi < 0)
        big = np.abs(delta) >= self.s.min_change * np.maximum(np.abs(base), np.abs(new))
        matters = np.abs(delta) >= self.floor(delta, idle) * step_ns
        pct = np.divide(100.0 * delta, base, out=np.full(len(a), np.nan), where=base != 0)
        return {"BaseNs": base, "NewNs": new, "DeltaNs": delta, "CiLowNs": lo, "CiHighNs": hi,
                "DeltaPercent": pct, "significant": excludes & big & matters}

    def floor(self, delta: np.ndarray, idle) -> np.ndarray:
        """The share of a baseline step that a change of each row must reach: ``min_idle`` where
        its idle part is larger than the rest of it, else ``min_share``."""
        if idle is None:
            return np.full(len(delta), self.s.min_share)
        idle = np.asarray(idle, dtype=float)
        mostly = np.abs(idle) > np.abs(delta - idle)
        return np.where(mostly, max(self.s.min_share, self.s.min_idle), self.s.min_share)


def verdicts(df, present_a=None, present_b=None) -> np.ndarray:
    """'new' / 'vanished' / 'slower' / 'faster' for significant rows; 'slower, below threshold'
    (or faster) where the interval excludes zero but the change is too small to count; else
    'no significant change'."""
    d = df["DeltaNs"].to_numpy()
    sig = df["significant"].to_numpy(dtype=bool)
    lo, hi = df["CiLowNs"].to_numpy(dtype=float), df["CiHighNs"].to_numpy(dtype=float)
    out = np.full(len(df), "no significant change", dtype=object)
    out[(lo > 0) & ~sig] = "slower, below threshold"
    out[(hi < 0) & ~sig] = "faster, below threshold"
    out[sig & (d > 0)] = "slower"
    out[sig & (d < 0)] = "faster"
    if present_a is not None:
        out[sig & ~present_a & present_b] = "new"
        out[sig & present_a & ~present_b] = "vanished"
    return out


def order(df):
    """Regressions first (largest first), then improvements (largest first), then the rest by
    the size of their change."""
    d = df["DeltaNs"].to_numpy(dtype=float)
    sig = df["significant"].to_numpy(dtype=bool)
    group = np.where(sig & (d > 0), 0, np.where(sig & (d < 0), 1, 2))
    key = np.where(group == 0, -d, np.where(group == 1, d, -np.abs(d)))
    idx = np.lexsort((key, group))
    return df.iloc[idx].reset_index(drop=True)
