"""Joules per step, per ROCTx range, per launch line and per kernel, per process, from the GPUs'
meters (rocpd.energy.meter) and the analysis' processes (rocpd.analysis.activity).

A process's GPUs are those it ran work on that its database metered (all GPUs its database
metered when it ran none): several ranks of one host each metering every GPU count each GPU
once, with the rank that used it. The run's energy of a process is the sum over its GPUs of
E(last) - E(first) over the GPU's run (its first reading or work to its last); a row's share
is of that.

- step: each step of the analysis (rocpd.analysis.steps: the given or detected ROCTx step
  range; the whole run as one step without), E(end) - E(start) of its host range;
- range: each ROCTx range name, the sum over its instances (nested ranges each their own);
- kernel, line: the GPU work by kernel (or copy) name or by its launching Python line, shared
  as rocpd.energy.share says, and a row "idle" for the GPU's time without work.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.activity import load
from ..analysis.steps import step_name, steps_of
from ..errors import RocpdError
from . import meter as meters_mod
from .share import PLUS_MINUS_RULE, SHARE_RULE, plus_minus, work

BY = ("step", "range", "line", "kernel")
IDLE = "idle"
NO_LINE = "(no line)"
_KEY = {"step": "step", "range": "range", "line": "line", "kernel": "kernel"}
_HEAD = ["process", "rank", "pid"]
_FIGURES = ["Count", "Joules", "Seconds", "Watts", "SharePercent", "PlusMinusJoules"]


def columns(by: str, units_per_step: float | None = None) -> list[str]:
    key = ["step", "name"] if by == "step" else [_KEY[by]]
    return [*_HEAD, *key, *_FIGURES, *(["JoulesPerUnit"] if units_per_step else [])]


def gpus_of(p, meters) -> list:
    """The meters of process ``p``'s GPUs (see the module's text)."""
    mine = [m for m in meters if m.guid == p.guid]
    used = set(p.gpu["agent"].astype(int)) if len(p.gpu) else set()
    ran = [m for m in mine if m.agent in used]
    return ran or (mine if not used else [])


def energy_table(db, by: str = "step", step: str | None = None,
                 units_per_step: float | None = None, **filters):
    """The table ``rocpd.energy(db, by=...)`` returns (see rocpd.energy)."""
    if by not in BY:
        raise RocpdError(f"by={by!r}: choose one of {', '.join(BY)}")
    if units_per_step is not None and not units_per_step > 0:
        raise RocpdError(f"units per step {units_per_step}: give a positive number (tokens or "
                         "samples per step)")
    meters = meters_mod.read(db, **filters)
    if not meters:
        raise RocpdError(meters_mod.MISSING)
    procs = load(db, **filters)
    return frame(procs, meters, by, step_name(procs, step), units_per_step)


def frame(procs, meters, by: str, name: str | None, units_per_step: float | None = None):
    """The table of processes ``procs`` (rocpd.analysis.activity) on ``meters``, steps the
    ROCTx range ``name`` (None: the whole run is one step)."""
    rows = []
    for p in procs:
        mine = gpus_of(p, meters)
        if not mine:
            continue
        st = steps_of(p, name) if name else None
        rows += _rows(p, mine, by, st, units_per_step)
    out = pd.DataFrame(rows, columns=columns(by, units_per_step))
    if by != "step" and len(out):
        out = out.sort_values(["rank", "pid", "Joules"], ascending=[True, True, False],
                              na_position="last", kind="stable", ignore_index=True)
    out.attrs.update(step=name, by=by, meters=[m.describe() for m in meters],
                     rules=[SHARE_RULE, PLUS_MINUS_RULE] if by in ("line", "kernel")
                     else [PLUS_MINUS_RULE])
    return out



def run_energy(p, mine) -> float:
    """The process's energy over its GPUs' runs (J)."""
    total = 0.0
    for m in mine:
        g = p.gpu[p.gpu["agent"].astype(int) == m.agent] if len(p.gpu) else p.gpu
        _, _, lo, hi = work(m, g["start"].to_numpy() if len(g) else [],
                            g["end"].to_numpy() if len(g) else [])
        total += float(m.between([lo], [hi])[0])
    return total


def step_joules(p, mine, st) -> tuple[np.ndarray, np.ndarray]:
    """(joules, ±) of each step of ``st`` (start, end), summed over ``mine``."""
    s, e = st["start"].to_numpy(np.int64), st["end"].to_numpy(np.int64)
    j = np.zeros(len(st))
    pm2 = np.zeros(len(st))
    for m in mine:
        x = m.between(s, e)
        j += x
        pm2 += plus_minus(m, x, e - s) ** 2
    return j, np.sqrt(pm2)


def _rows(p, mine, by, st, units_per_step) -> list[dict]:
    head = {"process": p.label, "rank": p.rank, "pid": p.pid}
    total = run_energy(p, mine)
    nsteps = len(st) if st is not None else 0
    if by == "step":
        if st is None or st.empty:
            lo = min(int(m.first) for m in mine)
            hi = max(int(m.last) for m in mine)
            st = pd.DataFrame({"step": [0], "start": [lo], "end": [hi], "name": ["(whole run)"]})
            nsteps = 1
        j, pm = step_joules(p, mine, st)
        secs = (st["end"].to_numpy(np.int64) - st["start"].to_numpy(np.int64)) / 1e9
        return [{**head, "step": int(k), "name": n, **_figures(1, jj, ss, total, pp, units_per_step, 1)}
                for k, n, jj, ss, pp in zip(st["step"], st["name"], j, secs, pm, strict=True)]
    if units_per_step and not nsteps:
        raise RocpdError("--units-per-step needs steps (a ROCTx step range, given with --step or"
                         " detected): none in " + p.label)
    if by == "range":
        r = p.ranges
        if r.empty:
            return []
        sub = pd.DataFrame({"key": r["name"].to_numpy(object), "start": r["start"].to_numpy(np.int64),
                            "end": r["end"].to_numpy(np.int64)})
        j, pm = step_joules(p, mine, sub)
        sub = sub.assign(j=j, pm2=pm ** 2, ns=sub["end"] - sub["start"])
    else:
        sub = _work_rows(p, mine, by)
        if sub.empty:
            return []
    g = sub.groupby("key", sort=False).agg(n=("j", "size"), j=("j", "sum"), pm2=("pm2", "sum"),
                                           ns=("ns", "sum"))
    return [{**head, _KEY[by]: k, **_figures(int(x.n), x.j, x.ns / 1e9, total, np.sqrt(x.pm2),
                                              units_per_step, nsteps)}
            for k, x in g.iterrows()]


def _work_rows(p, mine, by):
    """One row per piece of work (key, j, pm2, ns) and per idle gap (key "idle")."""
    parts = []
    g_all = p.gpu
    for m in mine:
        g = g_all[g_all["agent"].astype(int) == m.agent] if len(g_all) else g_all
        s = g["start"].to_numpy(np.int64) if len(g) else np.zeros(0, np.int64)
        e = g["end"].to_numpy(np.int64) if len(g) else np.zeros(0, np.int64)
        j, (gs, ge), _, _ = work(m, s, e)
        if len(g):
            keys = g["name"] if by == "kernel" else g["site"].where(g["site"].notna(), NO_LINE)
            parts.append(pd.DataFrame({"key": keys.astype(str).to_numpy(object), "j": j,
                                       "pm2": plus_minus(m, j, e - s) ** 2, "ns": e - s}))
        ij = m.between(gs, ge)
        parts.append(pd.DataFrame({"key": IDLE, "j": ij, "pm2": plus_minus(m, ij, ge - gs) ** 2,
                                   "ns": ge - gs}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _figures(count, joules, seconds, total, pm, units_per_step, nsteps) -> dict:
    out = {"Count": count, "Joules": float(joules), "Seconds": float(seconds),
           "Watts": float(joules) / seconds if seconds > 0 else float("nan"),
           "SharePercent": 100.0 * float(joules) / total if total > 0 else float("nan"),
           "PlusMinusJoules": float(pm)}
    if units_per_step:
        out["JoulesPerUnit"] = float(joules) / (units_per_step * max(nsteps, 1))
    return out
