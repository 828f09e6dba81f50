"""Energy of intervals and of GPU work on one GPU's meter (rocpd.energy.meter), and the ± of
each figure. Pure arrays: the tables (rocpd.energy.tables) and the idle-energy finding read it.

Intervals (steps, ROCTx ranges, idle gaps): the energy of [t0, t1] is E(t1) - E(t0).

GPU work (kernels, copies), which overlaps in time: within each counter period (the stretch
between two knots of E, over which the power is taken as constant) the time no work runs is
idle and gets its share of the period's energy by time; the rest is shared among the work
running in that period in proportion to each one's time in it. So the work and the idle of a
GPU add up to its energy, and two kernels running side by side split the busy energy by their
times.

± (the resolution: one counter period, or one power reading's spacing or the power's update
period where that is longer): each instance is
uncertain by the energy of one resolution at its own mean power, at each of its two ends,
capped at its own energy; the instances of one row add in quadrature.
"""

from __future__ import annotations

import numpy as np

from ..analysis.intervals import union

SHARE_RULE = ("kernels and lines share each counter period's energy: the period's idle time (no "
              "kernel or copy running) is 'idle', the rest goes to the work running in it in "
              "proportion to each one's time in it")
PLUS_MINUS_RULE = ("±: per instance, the energy of one counter period (power: one reading's "
                   "spacing, or its update period if longer) at the instance's mean power at each of its two ends, capped at its "
                   "energy; instances add in quadrature")


def plus_minus(meter, joules, durations_ns) -> np.ndarray:
    """Each instance's ± (J) from its joules and duration (see the module's text)."""
    j = np.asarray(joules, dtype=np.float64)
    d = np.asarray(durations_ns, dtype=np.float64)
    watts_ns = np.divide(j, d, out=np.zeros_like(j), where=d > 0)
    return np.minimum(2.0 * watts_ns * float(meter.resolution_ns), np.abs(j))


def span(meter, starts=(), ends=()) -> tuple[int, int]:
    """The GPU's run: from its first reading (or first work) to its last."""
    lo = [meter.first, *([int(np.min(starts))] if len(starts) else [])]
    hi = [meter.last, *([int(np.max(ends))] if len(ends) else [])]
    return min(lo), max(hi)


def _covered(starts, ends, x) -> np.ndarray:
    """For each time x: the sum over intervals of their length before x (int64, exact)."""
    ss = np.sort(np.asarray(starts, dtype=np.int64))
    es = np.sort(np.asarray(ends, dtype=np.int64))
    cs = np.concatenate([[0], np.cumsum(ss)])
    ce = np.concatenate([[0], np.cumsum(es)])
    i = np.searchsorted(ss, x, side="right")
    k = np.searchsorted(es, x, side="right")
    return (i * x - cs[i]) - (k * x - ce[k])


def work(meter, starts, ends) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], int, int]:
    """(joules of each piece of work, (idle gap starts, ends), run start, run end) on one GPU
    whose work runs over [starts[i], ends[i]] (see the module's text). The idle gaps are the
    run's time with no work; their joules are ``meter.between``."""
    s = np.asarray(starts, dtype=np.int64)
    e = np.maximum(np.asarray(ends, dtype=np.int64), s)
    lo, hi = span(meter, s, e)
    us, ue = union(s, e)
    gaps_s = np.concatenate([[lo], ue])
    gaps_e = np.concatenate([us, [hi]])
    keep = gaps_e > gaps_s
    gaps = (gaps_s[keep], gaps_e[keep])
    if s.size == 0:
        return np.zeros(0), gaps, lo, hi
    # Times relative to the run's start keep the int64 sums exact.
    knots = np.round(meter.t).astype(np.int64)
    grid = np.unique(np.concatenate([knots[(knots > lo) & (knots < hi)], [lo, hi]])) - lo
    energy = meter.at(grid + lo)
    dt = np.diff(grid).astype(np.float64)
    power = np.divide(np.diff(energy), dt, out=np.zeros_like(dt), where=dt > 0)
    summed = np.diff(_covered(s - lo, e - lo, grid)).astype(np.float64)   # work-time per period
    busy = np.diff(_covered(us - lo, ue - lo, grid)).astype(np.float64)   # wall time with work
    per_work_ns = np.divide(power * busy, summed, out=np.zeros_like(dt), where=summed > 0)
    cumulative = np.concatenate([[0.0], np.cumsum(per_work_ns * dt)])
    joules = np.interp(e - lo, grid, cumulative) - np.interp(s - lo, grid, cumulative)
    return joules, gaps, lo, hi
