"""Energy per step of two runs (rocpd.energy), compared when both recorded energy counter or
power samples (`rocprof run --energy`). A step's energy is E(end) - E(start) over its process's
GPUs; a run's figure the mean over its steps (each step the mean over the processes that ran
it). Its change gets the bootstrap interval and is judged as a host-side figure is (the GPUs'
idle power follows the host's pace): against the between-run noise (rocpd.diff.runs), measured
from several runs per side, else ``run_noise`` of a baseline step's energy."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..energy.tables import gpus_of, step_joules
from .bootstrap import Resampler, verdicts

COLUMNS = ["metric", "BaseJ", "NewJ", "DeltaJ", "CiLowJ", "CiHighJ", "DeltaPercent",
           "significant", "verdict", "host", "RunNoiseJ", "noisy"]


def per_step(side) -> tuple[np.ndarray, np.ndarray] | None:
    """(joules of each step column, the run of each column) of a side, None without meters."""
    if not side.meters:
        return None
    n = max((int(ps.steps["step"].max()) + 1 for ps in side.procs if len(ps.steps)), default=0)
    total, have, run = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    for ps in side.procs:
        mine = gpus_of(ps.process, side.meters)
        if not mine or ps.steps.empty:
            continue
        j, _ = step_joules(ps.process, mine, ps.steps)
        k = ps.steps["step"].to_numpy(dtype=int)
        total[k] += j
        have[k] += 1
        run[k] = getattr(ps, "run", 0)
    if not have.any():
        return None
    keep = have > 0
    return total[keep] / have[keep], run[keep]


def compare(base, new, settings):
    """The "energy per step" row (COLUMNS), or None unless both sides have energy."""
    a, b = per_step(base), per_step(new)
    if a is None or b is None:
        return None
    (ja, ra), (jb, rb) = a, b
    r = Resampler(len(ja), len(jb), settings, runs_a=ra, runs_b=rb)
    scale = float(ja.mean()) if len(ja) else 0.0
    delta = float(jb.mean() - ja.mean()) if len(ja) and len(jb) else 0.0
    c = r.compare(ja[None, :], jb[None, :], scale, np.array([delta]))
    row = {"metric": "energy per step", "BaseJ": c["BaseNs"][0], "NewJ": c["NewNs"][0],
           "DeltaJ": c["DeltaNs"][0], "CiLowJ": c["CiLowNs"][0], "CiHighJ": c["CiHighNs"][0],
           "DeltaPercent": c["DeltaPercent"][0], "significant": bool(c["significant"][0]),
           "host": bool(c["host"][0]), "RunNoiseJ": c["RunNoiseNs"][0], "noisy": bool(c["noisy"][0])}
    df = pd.DataFrame([row])
    df["verdict"] = verdicts(df.rename(columns={"DeltaJ": "DeltaNs", "CiLowJ": "CiLowNs",
                                                "CiHighJ": "CiHighNs"}), repeated=r.measured)
    df["verdict"] = df["verdict"].replace({"slower": "more", "faster": "less",
                                           "slower, below threshold": "more, below threshold",
                                           "faster, below threshold": "less, below threshold"})
    return df[COLUMNS]


def text(df) -> str:
    """One line: 'energy per step: 340.0 -> 352.1 J (+12.1 J [+8.0, +16.2], +3.6%), verdict'."""
    if df is None or not len(df):
        return ""
    x = df.iloc[0]
    ci = ("n/a" if x["CiLowJ"] != x["CiLowJ"] else f"[{x['CiLowJ']:+,.3f}, {x['CiHighJ']:+,.3f}]")
    pct = "" if x["DeltaPercent"] != x["DeltaPercent"] else f", {x['DeltaPercent']:+.1f}%"
    return (f"energy per step: {x['BaseJ']:,.3f} -> {x['NewJ']:,.3f} J ({x['DeltaJ']:+,.3f} J"
            f" {ci}{pct}), {x['verdict']}")
