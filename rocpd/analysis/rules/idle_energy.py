"""Rule: the GPUs draw a large share of the run's energy while no kernel or copy runs (the
device on and waiting: start-up, data loading, the host's pace, waits). Energy per GPU from its
counter or power samples (rocpd.energy.meter, `rocprof run --energy`); idle energy is the
energy of the GPU's run without work, as rocpd.energy.share divides it."""

from __future__ import annotations

from ...energy import share
from ..findings import Finding, _pct

IDLE_SHARE = 0.20  # idle energy above this share of the run's energy: an issue


def idle_energy(a) -> list[Finding]:
    if not a.meters:
        return []
    total = idle = 0.0
    per_gpu = []
    for p in a.processes:
        used = set(p.gpu["agent"].astype(int)) if len(p.gpu) else set()
        for m in a.meters:
            if m.guid != p.guid or m.agent not in used:
                continue
            g = p.gpu[p.gpu["agent"].astype(int) == m.agent]
            _, (gs, ge), lo, hi = share.work(m, g["start"].to_numpy(), g["end"].to_numpy())
            run = float(m.between([lo], [hi])[0])
            gap = float(m.between(gs, ge).sum())
            total += run
            idle += gap
            per_gpu.append((gap, run, p.label, m))
    if total <= 0 or idle / total <= IDLE_SHARE:
        return []
    gap, run, label, m = max(per_gpu, key=lambda x: x[0])
    title = (f"{_pct(idle / total)} of the GPUs' energy ({idle:,.0f} J of {total:,.0f} J) is drawn"
             " while no kernel or copy runs")
    ev = [f"{label} {m.label}: {gap:,.0f} J idle of {run:,.0f} J ({m.describe()})",
          f"threshold: idle energy above {_pct(IDLE_SHARE)} of the run's"]
    sugg = ("an idle GPU still draws power: keep it fed (overlap data loading and host work with "
            "the GPU's, fewer synchronisations, CUDA graphs for launch-bound steps) or shorten the "
            "start-up and teardown; `rocpd energy DB --by kernel` shows the idle row beside the "
            "kernels")
    return [Finding("idle-energy", title, sugg, idle / total, ev)]


RULES = (idle_energy,)
