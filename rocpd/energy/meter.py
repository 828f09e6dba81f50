"""Each GPU's energy over time, E(t) in joules, from its sampled device metrics: the cumulative
energy counter (``device_energy``, J) where the capture read one, else the power draw
(``device_power``, W) integrated. Which one a GPU has is the metadata row
``rocprof.energy.source.gpu<k>`` (``counter`` or ``power``), else whichever metric was sampled.

Counter. The counter only changes every ``rocprof.energy.period_ns.gpu<k>`` ns, while it is read
more often (100 Hz or more): between two readings of one value the counter was stale, not the
device idle. So E(t) is drawn through the counter's CHANGE points, not through every reading:
each new value was reached at an update that lies between the reading before it and the reading
that first shows it (and within one period of the latter); the update is placed at the middle of
that bracket, and E is linear between updates (constant power over each counter period). A
counter that steps back (a driver reset) is held at its highest value.

Power. E(t) is the trapezoid integral of the readings (W x s), linear between readings.

Outside its first and last update E is extended at the power of its first and last period.
The resolution is the counter's period (its median update spacing where no period was stored)
or the power readings' median spacing (the power's own update period where that is longer):
rocpd.energy.share turns it into each figure's ± rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..device_metrics.samples import file_samples
from ..io.filters import Filter, resolve

ENERGY_METRIC = "device_energy"
POWER_METRIC = "device_power"
SOURCE_TAG = "rocprof.energy.source.gpu"
PERIOD_TAG = "rocprof.energy.period_ns.gpu"
MISSING = ("no device energy or power samples in these databases (record them with "
           "`rocprof run --energy ...`)")

_SCALE = {"j": 1.0, "mj": 1e-3, "uj": 1e-6, "µj": 1e-6, "w": 1.0, "mw": 1e-3, "uw": 1e-6,
          "µw": 1e-6, "kj": 1e3}
_ORDINAL = re.compile(r"\[(\d+)\]\s*$")


@dataclass
class Meter:
    """E(t) of one GPU as one database recorded it: knots ``t`` (ns, int64) and ``e`` (J from
    the first knot), ``source`` "counter" or "power", ``resolution_ns`` (see the module)."""

    guid: str
    pid: int
    agent: int       # rocpd_info_agent.id of the GPU in its database
    gpu: int         # the GPU's ordinal (the "[k]" of its tracks)
    source: str
    t: np.ndarray
    e: np.ndarray
    resolution_ns: float
    first: int       # first and last reading
    last: int

    def at(self, times) -> np.ndarray:
        """E at ``times`` (J), extended beyond the knots at the edge periods' power."""
        x = np.asarray(times, dtype=np.float64)
        y = np.interp(x, self.t, self.e)
        if self.t.size >= 2:
            lo, hi = x < self.t[0], x > self.t[-1]
            y[lo] = self.e[0] + (x[lo] - self.t[0]) * self._slope(0)
            y[hi] = self.e[-1] + (x[hi] - self.t[-1]) * self._slope(-1)
        return y

    def between(self, starts, ends) -> np.ndarray:
        """Joules of each interval [starts[i], ends[i]]: E(end) - E(start)."""
        return self.at(ends) - self.at(starts)

    def _slope(self, i: int) -> float:
        a, b = (0, 1) if i == 0 else (-2, -1)
        dt = float(self.t[b] - self.t[a])
        return float(self.e[b] - self.e[a]) / dt if dt > 0 else 0.0

    @property
    def label(self) -> str:
        return f"GPU {self.gpu}"

    def describe(self) -> str:
        """'GPU 0: counter, period 50 ms' (what the figures rest on)."""
        what = "counter, period" if self.source == "counter" else "power readings every"
        return f"{self.label}: {what} {self.resolution_ns / 1e6:g} ms"


def counter_knots(t, v, period_ns: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(knot times, joules from the first knot, resolution) of a cumulative counter read at
    ``t`` with values ``v`` (see the module's text)."""
    t, v = _sorted_unique(t, v)
    v = np.maximum.accumulate(v)
    change = np.flatnonzero(np.diff(v) > 0) + 1
    if change.size == 0:
        return np.array([t[0], t[-1]], dtype=np.float64), np.zeros(2), float(period_ns or 0.0)
    hi = t[change]
    lo = t[change - 1]
    if period_ns is None or period_ns <= 0:
        when = (lo + hi) / 2.0
        period_ns = float(np.median(np.diff(when))) if when.size >= 2 else float(hi[0] - t[0])
    lo = np.maximum(lo, hi - period_ns)
    when = (lo + hi) / 2.0
    # The first value was reached at an update within one period before its first reading.
    knots_t = np.concatenate([[min(t[0] - period_ns / 2.0, when[0] - 1.0)], when])
    knots_v = np.concatenate([[v[0]], v[change]])
    return knots_t, knots_v - knots_v[0], float(period_ns)


def power_knots(t, w) -> tuple[np.ndarray, np.ndarray, float]:
    """(knot times, joules from the first reading, resolution) of power readings ``w`` (W) at
    ``t`` (ns): the trapezoid integral."""
    t, w = _sorted_unique(t, w)
    dt = np.diff(t) / 1e9
    e = np.concatenate([[0.0], np.cumsum((w[1:] + w[:-1]) / 2.0 * dt)])
    res = float(np.median(np.diff(t))) if t.size >= 2 else 0.0
    return t, e, res


def _sorted_unique(t, v):
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    keep = np.ones(t.size, dtype=bool)
    keep[:-1] = t[1:] != t[:-1]  # two readings at one time: the later one
    return t[keep], v[keep]


def _scale(units) -> float:
    return _SCALE.get(str(units or "").strip().lower(), 1.0)


def _ordinal(track, index) -> int:
    m = _ORDINAL.search(str(track or ""))
    if m:
        return int(m.group(1))
    return int(index) if index is not None and index == index else 0


def read(db, **filters) -> list[Meter]:
    """Every GPU's meter in ``db`` (a Connection) under the shared filters, by database and GPU;
    [] when no energy counter or power was sampled."""
    where, params = resolve(db, Filter.of(filters))
    # Only the two metrics, in SQL: a run sampling every core's load holds many more readings.
    frames = [pd.DataFrame.from_records(rows, columns=cols) for cols, rows in db.map(
        file_samples, f"({where}) AND metric IN (?, ?)", [*params, ENERGY_METRIC, POWER_METRIC],
        label="energy")]
    df = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(
        len(f) for f in frames) else None
    if df is None:
        return []
    meta = {(g, k): v for g, k, v in db.metadata() if k.startswith(("rocprof.energy.",))}
    out = []
    df = df.assign(ordinal=[_ordinal(tr, ix) for tr, ix in zip(df["track"], df["agent_index"],
                                                                strict=True)])
    for (guid, ordinal), g in df.groupby(["guid", "ordinal"], sort=True):
        by = {m: x for m, x in g.groupby("metric")}
        source = str(meta.get((guid, f"{SOURCE_TAG}{ordinal}"), "")).strip().lower()
        if source not in ("counter", "power") or (
                (ENERGY_METRIC if source == "counter" else POWER_METRIC) not in by):
            source = "counter" if ENERGY_METRIC in by else "power"
        x = by[ENERGY_METRIC if source == "counter" else POWER_METRIC]
        if len(x) < 2:
            continue
        times = x["timestamp"].to_numpy(dtype=np.float64)
        values = x["value"].to_numpy(dtype=np.float64) * _scale(x["units"].iloc[0])
        period = _number(meta.get((guid, f"{PERIOD_TAG}{ordinal}")))
        if source == "counter":
            kt, ke, res = counter_knots(times, values, period)
        else:
            kt, ke, res = power_knots(times, values)
            res = max(res, period or 0.0)  # a power figure that the device updates less often
        agent = x["agent_id"].iloc[0]
        pid = x["pid"].iloc[0]
        out.append(Meter(str(guid), int(pid) if pid == pid and pid is not None else 0,
                         int(agent) if agent == agent and agent is not None else -1,
                         int(ordinal), source, kt, ke, res, int(times.min()), int(times.max())))
    return out


def _number(text) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
