"""The change of a time per step between two runs, with a confidence interval from the
step-to-step spread: a percentile bootstrap of the difference of the two runs' per-step figures,
the steps of each run resampled with replacement (the runs are independent: step k of one is no
twin of step k of the other). The resampling weights are drawn once per comparison from a seeded
generator, so the same databases give the same intervals, and every table of one diff shares them.

The per-step figure. GPU work (kernels, copies, collectives: their time, and the rest of a step
that is not GPU idle) is the mean over the steps: work that runs every fourth step counts a
quarter, and the parts of a step add up to it. GPU idle follows the host's pace (how fast Python
reaches the next launch, when a wait returns, a collection or the OS now and then), and that is
heavy-tailed: most steps idle for a few tens of µs, a few for a millisecond when the host was held
up. Two runs of one unchanged program do not share those few steps (on an H100: 0.208 against
0.074 ms of idle per step, the step 5 % shorter, its bootstrap interval of the mean excluding 0),
so GPU idle is a trimmed mean: each run's steps ordered by their GPU idle, the ``trim`` share with
the most and the ``trim`` share with the least idle left out, the mean of the rest (20 %: the
middle 60 %). One set of kept steps per run (and per resample, trimmed after resampling, so the
interval is the trimmed mean's) serves every idle row, so the idle of the lines adds up to the
idle phase and to the step's, and a step's time is the mean of its non-idle part plus its trimmed
idle. A change of idle in fewer than ``trim`` of the steps is left out with the host's pauses;
``trim=0`` gives plain means.

A change is *significant* when its interval excludes zero and it is large enough to matter:
at least ``min_change`` of the larger of the two times (a kernel 1 % slower is within what
clocks and placement move between two runs, which the steps of one run do not show) and at
least ``min_share`` of a baseline step (the host's own pace moves the idle gaps of two runs of
one program by a few µs each).

The typical step's idle also moves between two runs of one program (on an H100, 0.055 to 0.111
ms in steps of a few ms) while each run's steps agree with each other. So a change that is mostly
GPU idle (its idle part larger than the rest: an idle row, the idle phase, a line whose change is
its idle) counts only from ``min_idle`` of a baseline step, by default as much as the step time
itself must change to count (``min_change``): an idle change smaller than that is not what made
the step slower. Idle that a new wait brings (a sync that was not there) is not host pace: it is
judged as work is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import RocpdError
from . import runs

CPU_RUN_NOISE = 0.5  # rocpd.diff.runs: one run per side, runs without GPU work
CHUNK = 512  # rows resampled at a time: bounds memory at CHUNK x resamples floats


@dataclass(frozen=True)
class Settings:
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    min_change: float = 0.05
    min_share: float = 0.005
    min_idle: float = 0.05
    trim: float = 0.2
    run_noise: float | None = None  # rocpd.diff.runs: host-side changes, one run per side

    def check(self) -> Settings:
        if not 0.5 <= self.confidence < 1:
            raise RocpdError(f"confidence {self.confidence}: give a level in [0.5, 1), e.g. 0.95")
        if self.resamples < 100:
            raise RocpdError(f"resamples {self.resamples}: at least 100 (default 2000)")
        if self.min_change < 0 or self.min_share < 0 or self.min_idle < 0:
            raise RocpdError("min_change, min_share and min_idle must not be negative")
        if not 0 <= self.trim < 0.5:
            raise RocpdError(f"trim {self.trim}: give a share in [0, 0.5) of the steps to leave"
                             " out at each end of the GPU idle (0: plain means; default 0.2)")
        if self.run_noise is not None and self.run_noise < 0:
            raise RocpdError(f"run_noise {self.run_noise}: give a share of a step, 0 or more"
                             " (default: none for runs with GPU work, 0.5 without)")
        return self

    def for_runs(self, gpu: bool) -> Settings:
        """These settings with ``run_noise`` resolved: given, or none for runs with GPU work
        (with one run per side their verdict rests on GPU work) and half a step without
        (rocpd.diff.runs)."""
        if self.run_noise is not None:
            return self
        return replace(self, run_noise=math.inf if gpu else CPU_RUN_NOISE)

    def statistic(self) -> str:
        """How a run's figure per step is formed, in words (a diff's header says it)."""
        if not self.trim:
            return "per step: mean over the steps"
        return (f"per step: GPU work (and the rest of the step) the mean over the steps, GPU idle"
                f" a {self.trim:.0%} trimmed mean (each run's {self.trim:.0%} of steps with the"
                f" most idle and {self.trim:.0%} with the least left out)")


def trimmed(order_by: np.ndarray, counts: np.ndarray, trim: float) -> np.ndarray:
    """Weights (n x r) of the trimmed mean of each column of step ``counts`` (n x r: how often
    each of n steps is drawn, n in all): the steps ordered by ``order_by`` (ties by index), the
    ``trim`` share at each end left out (a step drawn across a cut counts in part)."""
    n = len(order_by)
    g = int(trim * n)
    if g == 0:
        return counts / n if n else counts
    order = np.argsort(order_by, kind="stable")
    c = counts[order]
    end = np.cumsum(c, axis=0)
    kept = np.clip(np.minimum(end, n - g) - np.maximum(end - c, g), 0, None)
    out = np.empty_like(kept, dtype=float)
    out[order] = kept / (n - 2 * g)
    return out


def run_weights(runs, idle, trim: float):
    """(mean, trimmed): n x k weights that give each of the k runs' figure per step from the n
    step columns; ``runs``: the run of each column; ``idle``: the GPU idle of each column (the
    order of the trimmed mean, within each run)."""
    runs = np.asarray(runs, dtype=int)
    n = len(runs)
    k = int(runs.max()) + 1 if n else 0
    mean = np.zeros((n, k))
    trim_w = np.zeros((n, k))
    key = np.zeros(n) if idle is None else np.asarray(idle, dtype=float)
    for j in range(k):
        m = runs == j
        nj = int(m.sum())
        if not nj:
            continue
        mean[m, j] = 1.0 / nj
        trim_w[m, j] = trimmed(key[m], np.ones((nj, 1)), trim if idle is not None else 0.0)[:, 0]
    keep = mean.sum(axis=0) > 0  # a run left without steps (--skip-steps) has no figure
    return mean[:, keep], trim_w[:, keep]


class Resampler:
    """Bootstrap weights for ``na`` baseline and ``nb`` new steps; ``idle_a``, ``idle_b``: the
    GPU idle of each step of each run, which orders the steps for the trimmed mean (None: no
    trimming); ``runs_a``, ``runs_b``: the run each step belongs to (rocpd.diff.runs; None:
    one run)."""

    def __init__(self, na: int, nb: int, settings: Settings, idle_a=None, idle_b=None,
                 runs_a=None, runs_b=None):
        self.na, self.nb, self.s = na, nb, settings
        self.per_run = [run_weights(np.zeros(n, dtype=int) if r is None else r, i, settings.trim)
                        for n, r, i in ((na, runs_a, idle_a), (nb, runs_b, idle_b))]
        self.runs = (self.per_run[0][0].shape[1], self.per_run[1][0].shape[1])
        self.enough = na >= 2 and nb >= 2
        rng = np.random.default_rng(settings.seed)
        r = settings.resamples
        self.point, self.draws = [], []
        for n, idle in ((na, idle_a), (nb, idle_b)):
            counts = rng.multinomial(n, np.full(n, 1.0 / n), size=r).T if n else None
            key = np.zeros(n) if idle is None else np.asarray(idle, dtype=float)
            trim = settings.trim if idle is not None else 0.0
            self.point.append((np.full(n, 1.0 / n) if n else None,
                               trimmed(key, np.ones((n, 1)), trim)[:, 0] if n else None))
            self.draws.append((counts / n if n else None,
                               trimmed(key, counts, trim) if n else None))

    def estimate(self, work, idle, which: int) -> np.ndarray:
        """The per-step figure of rows of run ``which`` (0: baseline, 1: new): the mean of their
        ``work`` plus the trimmed mean of their ``idle`` (k x steps each; None: none)."""
        n = (self.na, self.nb)[which]
        mean, trim = self.point[which]
        k = len(work) if work is not None else len(idle)
        if not n:
            return np.zeros(k)
        out = np.zeros(k) if work is None else _rows(work, n) @ mean
        return out if idle is None else out + _rows(idle, n) @ trim

    def compare(self, a: np.ndarray, b: np.ndarray, step_ns: float, idle=None,
                a_idle=None, b_idle=None) -> dict:
        """Columns for rows of per-step values ``a`` (k x na) and ``b`` (k x nb) with the GPU
        idle part of each in ``a_idle``, ``b_idle`` (None: none); ``idle``: the change of each
        row's host-paced GPU idle (k; None: none), which sets its floor."""
        base = self.estimate(a, a_idle, 0)
        new = self.estimate(b, b_idle, 1)
        delta = new - base
        k = len(base)
        lo = np.full(k, np.nan)
        hi = np.full(k, np.nan)
        if self.enough:
            q = [(1 - self.s.confidence) / 2, 1 - (1 - self.s.confidence) / 2]
            for i in range(0, k, CHUNK):
                rows = slice(i, i + CHUNK)
                d = self._drawn(b, b_idle, 1, rows) - self._drawn(a, a_idle, 0, rows)
                lo[rows], hi[rows] = np.quantile(d, q, axis=1)
        excludes = (lo > 0) | (hi < 0)
        big = np.abs(delta) >= self.s.min_change * np.maximum(np.abs(base), np.abs(new))
        matters = np.abs(delta) >= self.floor(delta, idle) * step_ns
        pct = np.divide(100.0 * delta, base, out=np.full(k, np.nan), where=base != 0)
        host = self.host(delta, idle)
        noise, clears = self.between(a, b, a_idle, b_idle, delta, step_ns)
        would = excludes & big & matters
        return {"BaseNs": base, "NewNs": new, "DeltaNs": delta, "CiLowNs": lo, "CiHighNs": hi,
                "DeltaPercent": pct, "significant": would & (~host | clears),
                "host": host, "RunNoiseNs": np.where(host, noise, np.nan),
                "noisy": would & host & ~clears}

    def host(self, delta: np.ndarray, idle) -> np.ndarray:
        """Rows whose change is mostly host-paced (see ``floor``)."""
        if idle is None:
            return np.zeros(len(delta), dtype=bool)
        idle = np.asarray(idle, dtype=float)
        return np.abs(idle) > np.abs(delta - idle)

    @property
    def measured(self) -> bool:
        """Whether the runs measure their own spread (two or more on a side)."""
        return max(self.runs) >= 2 and min(self.runs) >= 1

    def between(self, a, b, a_idle, b_idle, delta, step_ns: float):
        """(noise, clears): the between-run noise of each row (the half-width of the runs' t
        interval, or the ``run_noise`` share of a step with one run per side) and whether the
        change clears it (rocpd.diff.runs)."""
        k = len(delta)
        if not self.measured:
            noise = np.full(k, self.s.run_noise * step_ns)
            return noise, np.abs(delta) > noise
        fa = self._per_run(a, a_idle, 0, k)
        fb = self._per_run(b, b_idle, 1, k)
        d, noise = runs.between(fa, fb, self.s.confidence)
        return noise, (np.abs(d) > noise) & (np.sign(d) == np.sign(delta))

    def _per_run(self, work, idle, which: int, k: int) -> np.ndarray:
        n = (self.na, self.nb)[which]
        mean, trim = self.per_run[which]
        out = np.zeros((k, mean.shape[1]))
        if work is not None and n:
            out = out + _rows(work, n) @ mean
        if idle is not None and n:
            out = out + _rows(idle, n) @ trim
        return out

    def _drawn(self, work, idle, which: int, rows: slice) -> np.ndarray:
        """``estimate`` in every resample: (rows x resamples)."""
        n = (self.na, self.nb)[which]
        mean, trim = self.draws[which]
        out = 0.0
        if work is not None:
            out = _rows(work, n)[rows] @ mean
        if idle is not None:
            out = out + _rows(idle, n)[rows] @ trim
        return out

    def floor(self, delta: np.ndarray, idle) -> np.ndarray:
        """The share of a baseline step that a change of each row must reach: ``min_idle`` where
        its idle part is larger than the rest of it, else ``min_share``."""
        if idle is None:
            return np.full(len(delta), self.s.min_share)
        idle = np.asarray(idle, dtype=float)
        mostly = np.abs(idle) > np.abs(delta - idle)
        return np.where(mostly, max(self.s.min_share, self.s.min_idle), self.s.min_share)


def _rows(x, n: int) -> np.ndarray:
    return np.asarray(x, dtype=float).reshape(-1, n)


def verdicts(df, present_a=None, present_b=None, repeated: bool = False) -> np.ndarray:
    """'new' / 'vanished' / 'slower' / 'faster' for significant rows; 'slower, below threshold'
    (or faster) where the interval excludes zero but the change is too small to count; 'within
    run-to-run noise' for a host-side change that would count but does not clear the between-run
    noise (``repeated``: measured from several runs; else '... unless repeated'); else 'no
    significant change'."""
    d = df["DeltaNs"].to_numpy()
    sig = df["significant"].to_numpy(dtype=bool)
    lo, hi = df["CiLowNs"].to_numpy(dtype=float), df["CiHighNs"].to_numpy(dtype=float)
    out = np.full(len(df), "no significant change", dtype=object)
    out[(lo > 0) & ~sig] = "slower, below threshold"
    out[(hi < 0) & ~sig] = "faster, below threshold"
    if "noisy" in df:
        noisy = df["noisy"].to_numpy(dtype=bool)
        out[noisy] = "within run-to-run noise" + ("" if repeated else " unless repeated")
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
