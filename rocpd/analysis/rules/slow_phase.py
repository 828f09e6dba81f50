"""Rule: the slowest ROCTx phase of a run without GPU work, as a share of the wall time. The
step range and the ranges enclosing whole steps (an epoch) are the loop, not a phase of it: a
run whose only ranges are those has no phase to name (its steps are step_spread's)."""

from __future__ import annotations

from ..cpu import has_gpu_work
from ..findings import Finding, _ms, _pct

SHOWN = 3  # phases named in the evidence


def slowest_phase(a) -> list[Finding]:
    if has_gpu_work(a):
        return []  # the GPU breakdown says where the time goes
    ph = a.phases
    if ph.empty:
        return []
    ph = ph[ph["Kind"] == "phase"].sort_values("WallPercent", ascending=False, kind="stable")
    if ph.empty:
        return []
    top = ph.iloc[0]
    share = float(top["WallPercent"]) / 100.0
    who = f" in {top['process']}" if len(a.processes) > 1 else ""
    title = (f"slowest phase{who}: ROCTx range '{top['Phase']}' takes {_pct(share)} of the wall "
             f"time ({_ms(float(top['TimeNs']))} of {_ms(float(top['WallNs']))})")
    ev = [f"'{r.Phase}': {_ms(float(r.TimeNs))} ({r.WallPercent:.0f} % of the wall time), "
          f"{r.Count} × mean {_ms(r.MeanNs)}, longest {_ms(float(r.MaxNs))}"
          for r in ph.head(SHOWN).itertuples()]
    sugg = (f"start inside '{top['Phase']}': its sampled lines show where that time goes "
            f"(rocpd samples DB --range '{top['Phase']}' --lines; record samples with "
            "rocprof run --sample)")
    return [Finding("slowest-phase", title, sugg, share, ev, level="info")]


RULES = (slowest_phase,)
