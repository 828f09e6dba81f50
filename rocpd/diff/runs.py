"""Several runs per side, and the between-run noise that host-side changes are judged against.

Runs. The databases given for one side are split into runs by time: the processes of one run
(its ranks, its data-loader workers) overlap in time, two runs of a program one after the other
do not. So a folder or a glob may hold the ranks of one run, several runs, or both.

Noise. How fast the host goes (Python reaching the next launch, when a wait returns, the OS now
and then) moves from run to run of one unchanged program by much more than its steps differ
within a run: host-side step time moved 20-30 % between runs on one machine, while the steps of
each run agreed. An interval from one run's steps cannot see that. So a host-side change (GPU
idle, host waits, the step time where GPU work does not explain it, and everything of a run
without GPU work) must also clear the between-run noise:

- with two or more runs on a side: a two-sample Student t interval of the runs' own figures
  (each run's figure per step, as the whole side's is formed), the runs' spread pooled over both
  sides; the change counts when that interval excludes zero too;
- with one run per side, nothing measures that spread, and it is "within run-to-run noise unless
  repeated": a run with GPU work has its verdict rest on GPU work (on generated runs whose
  host-side step time moves 20-30 % between runs, a floor of 30 % of a step made 5 of 20
  unchanged pairs a change, one of half a step 2 of 20: benchmarks/b_diff_runs.py); a run
  without GPU work has nothing else, so there a change counts from half a step (``run_noise``,
  which also sets a floor for runs with GPU work where given).

GPU work (kernel times and counts, new kernels) moves by a few per cent between runs at most and
is judged by the step intervals alone.
"""

from __future__ import annotations

import math

import numpy as np

# Runs per side for a host-side verdict, as measured on generated runs (README, rocpd diff).
RECOMMENDED_RUNS = 5


def spans(p) -> tuple[int, int] | None:
    """First and last time of anything process ``p`` recorded (None: nothing)."""
    lo, hi = [], []
    gpu = p.gpu_span()  # a swept process's from its sweep (``p.gpu`` holds its copies only)
    if gpu is not None:
        lo.append(gpu[0])
        hi.append(gpu[1])
    for frame, a, b in ((p.ranges, "start", "end"),
                        (p.api, "start", "end"), (p.samples, "timestamp", "timestamp")):
        if frame is not None and len(frame):
            lo.append(int(frame[a].min()))
            hi.append(int(frame[b].max()))
    return (min(lo), max(hi)) if lo else None


def split(processes) -> list[list[int]]:
    """Indices of ``processes`` grouped into runs: processes whose spans overlap (directly or
    through another) are one run; runs in time order. Processes that recorded nothing are left
    out."""
    items = sorted((s, i) for i, s in ((i, spans(p)) for i, p in enumerate(processes)) if s)
    runs: list[list[int]] = []
    end = None
    for (lo, hi), i in items:
        if end is None or lo > end:
            runs.append([i])
            end = hi
        else:
            runs[-1].append(i)
            end = max(end, hi)
    return runs


def one_side_first(pa, pb) -> bool:
    """Whether, with two or more runs on each side on one host, every run of one side started
    before every run of the other: then a drift of the machine between the two blocks (clocks,
    caches, other tenants) moves every run of a side alike, which the runs' spread cannot tell
    from a change of the program."""
    def starts(procs):
        first: dict = {}
        for ps in procs:
            s = spans(ps.process)
            if s is not None:
                first[ps.run] = min(first.get(ps.run, s[0]), s[0])
        return list(first.values())

    hosts = {ps.process.host for ps in (*pa, *pb)}
    a, b = starts(pa), starts(pb)
    if len(hosts) != 1 or len(a) < 2 or len(b) < 2:
        return False
    return max(a) < min(b) or max(b) < min(a)


def between(fa: np.ndarray, fb: np.ndarray, confidence: float):
    """The change of the runs' mean figure and the half-width of its t interval, per row of run
    figures ``fa`` (rows x runs of A) and ``fb``; half-width NaN where the runs cannot measure
    their spread (one run per side)."""
    ka, kb = fa.shape[1], fb.shape[1]
    rows = fa.shape[0]
    delta = (fb.mean(axis=1) if kb else np.zeros(rows)) - (fa.mean(axis=1) if ka else np.zeros(rows))
    df = ka + kb - 2
    if not ka or not kb or df < 1:
        return delta, np.full(rows, np.nan)
    ss = ((fa - fa.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) + \
        ((fb - fb.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    se = np.sqrt(ss / df * (1.0 / ka + 1.0 / kb))
    return delta, t_quantile(1 - (1 - confidence) / 2, df) * se


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (p > 0.5)."""
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * max(1.0, hi):
            break
    return (lo + hi) / 2


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1 - tail if t >= 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (a continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = tiny if abs(d) < tiny else d
        d = 1.0 / d
        c = 1.0 + num / c
        c = tiny if abs(c) < tiny else c
        f *= c * d
        if abs(1.0 - c * d) < 1e-14:
            break
    return front * (f - 1.0) / a
