"""Rule: steps that take unequal time, in a run without GPU work (a GPU run's per-step
breakdown says why a step is slow). Steps are the step range's instances (rocpd.analysis.steps);
the spread is the slowest step against the median one, and the time at stake is what the steps
above the median take beyond it."""

from __future__ import annotations

from ..cpu import has_gpu_work
from ..findings import Finding, _ms, _pct

MIN_STEPS = 3
SLOW_FACTOR = 1.5   # the slowest step takes this many times the median: an issue
SHOWN = 2  # slowest steps named


def step_spread(a) -> list[Finding]:
    if has_gpu_work(a):
        return []
    st = a.steps
    if len(st) < MIN_STEPS:
        return []
    ns = st["HostNs"].astype(float)
    med = float(ns.median())
    if med <= 0:
        return []
    slow = st.assign(HostNs=ns).sort_values("HostNs", ascending=False, kind="stable")
    worst = slow.iloc[0]
    factor = float(worst["HostNs"]) / med
    excess = float((ns - med).clip(lower=0).sum())
    total = float(ns.sum())
    first = "the first step" if int(worst["step"]) == int(st["step"].min()) else f"step {int(worst['step'])}"
    title = (f"step time varies: {first} of '{a.step_name}' takes {_ms(float(worst['HostNs']))}, "
             f"{factor:.1f}× the median step ({_ms(med)})")
    ev = [f"{len(st)} steps: median {_ms(med)}, fastest {_ms(float(ns.min()))}, slowest "
          f"{_ms(float(ns.max()))}; steps above the median take {_ms(excess)} beyond it "
          f"({_pct(excess / total)} of the step time)"]
    ev += [f"step {int(r.step)} ({r.process}): {_ms(float(r.HostNs))}" for r in slow.head(SHOWN).itertuples()]
    if factor < SLOW_FACTOR:
        return [Finding("step-spread", title, "steps take about equal time: nothing to even out",
                        0.0, ev, level="info")]
    sugg = ("a slow first step is warm-up (imports, allocation, compilation, caches): leave it out "
            "of timings; a slow later step points at irregular work (data loading, logging, "
            "checkpoints, garbage collection): compare its samples with a median step's "
            f"(rocpd samples DB --range '{a.step_name}' --window T0 T1)")
    return [Finding("step-spread", title, sugg, excess / total, ev)]


RULES = (step_spread,)
