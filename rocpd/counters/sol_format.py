"""Speed of light as text and plain data: the tables `rocpd sol` prints (run per GPU, then per
kernel) and its --json form, from a :class:`rocpd.counters.sol.SolResult`."""

from __future__ import annotations

import math

from rocshared import kernel_metrics as m
from rocshared.units import si

from ..textfmt import clip_name, more_rows
from .sol import SolResult, _isnan, dominant, empirical_note, rows, value_of


def _pct(v) -> str:
    return "-" if _isnan(v) else f"{v:.1f}"


def format_run(res: SolResult) -> str:
    lines = []
    for aid, pk in res.peaks.items():
        part = res.run[res.run["agent_id"] == aid]
        k = res.kernels[res.kernels["agent_id"] == aid]
        lines.append(f"== SPEED OF LIGHT: run on {pk.device} (agent {aid}; {len(k)} kernels, "
                     f"{int(k['dispatches'].sum())} dispatches, {k['seconds'].sum() * 1e3:.3f} ms) ==")
        lines.append(f"{'Metric':<22} {'Value':>16} {'Peak':>16} {'%Peak':>6} {'Empirical':>16} "
                     f"{'%Emp':>6}  Peak from")
        notes = []
        for _, r in part.iterrows():
            mark = " "
            if r.get("empirical_note"):
                notes.append(f"  [{len(notes) + 1}] {r['metric']}: %Emp {_pct(r['pct_of_empirical'])}: "
                             f"{r['empirical_note']}")
                mark = "!"
            lines.append(f"{r['metric']:<22} {si(r['value'], r['unit']):>16} {si(r['peak'], r['unit']):>16} "
                         f"{_pct(r['pct_of_peak']):>6} {si(r['empirical_peak'], r['unit']):>16} "
                         f"{_pct(r['pct_of_empirical']):>6}{mark} {r['peak_source']}"
                         + (f" [{len(notes)}]" if mark == "!" else ""))
        if notes:
            lines.append("! above its empirical peak:")
            lines += notes
    return "\n".join(lines) + "\n"


def format_kernels(res: SolResult, top: int | None = None) -> str:
    labels = {p.key: p for p in m.PRECISIONS}
    head = (f"{'Kernel':<44} {'Calls':>5} {'Time ms':>9} {'Math':<12} {'Rate':>14} {'%Pk':>5} "
            f"{'DRAM':>12} {'%Pk':>5} {'L2':>12} {'%Pk':>5} {'Occ%':>5} {'SM%':>5} {'FLOP/B':>7}")
    lines = ["== SPEED OF LIGHT: per kernel (% of the theoretical peak at the kernel's clock) ==", head]
    for i, (_, r) in enumerate(res.kernels.iterrows()):
        if top and i >= top:
            break
        key = dominant(r)
        p = labels.get(key)
        rate = r.get(f"rate_{key}") if key else math.nan
        peak = r.get(f"peak_{key}") if key else math.nan
        dram, l2 = r.get("rate_dram", math.nan), r.get("rate_l2", math.nan)
        lines.append(
            f"{clip_name(str(r['kernel_name']), 44):<44} {int(r['dispatches']):>5} {r['seconds'] * 1e3:>9.3f} "
            f"{(p.label if p else '-'):<12} {si(rate, p.unit if p else ''):>14} {_pct(_ratio(rate, peak)):>5} "
            f"{si(dram, 'B/s'):>12} {_pct(_ratio(dram, r.get('peak_dram'))):>5} "
            f"{si(l2, 'B/s'):>12} {_pct(_ratio(l2, r.get('peak_l2'))):>5} "
            f"{_pct(r.get(m.OCCUPANCY, math.nan)):>5} {_pct(r.get(m.SM_THROUGHPUT, math.nan)):>5} "
            f"{_num(r.get('intensity_dram')):>7}")
    if top and len(res.kernels) > top:
        lines.append(more_rows(len(res.kernels) - top))
    above = kernels_above_empirical(res, top)
    if above:
        lines.append("! kernels above an empirical peak:")
        lines += [f"  {name}: {label} {_pct(pct)} % of the empirical peak: {note}"
                  for name, label, pct, note in above]
    return "\n".join(lines) + "\n"


def kernels_above_empirical(res: SolResult, top: int | None = None) -> list[tuple]:
    """(kernel, metric, % of the empirical peak, why) for every shown kernel whose math rate,
    DRAM or L2 bandwidth is above its GPU's empirical peak."""
    labels = {p.key: p for p in m.PRECISIONS}
    out = []
    for i, (_, r) in enumerate(res.kernels.iterrows()):
        if top and i >= top:
            break
        pk = res.peaks.get(int(r["agent_id"]))
        if pk is None or not pk.empirical:
            continue
        key = dominant(r)
        checks = [(key, labels[key].label, labels[key].unit)] if key else []
        checks += [("dram", "DRAM bandwidth", "B/s"), ("l2", "L2 bandwidth", "B/s")]
        for k, label, unit in checks:
            v, emp = r.get(f"rate_{k}", math.nan), pk.empirical.get(k, math.nan)
            note = empirical_note(float(v), float(r.get(f"peak_{k}", math.nan)), emp, unit) \
                if not _isnan(v) else ""
            if note:
                out.append((clip(str(r["kernel_name"])), label, 100.0 * v / emp, note))
    return out


def clip(name: str) -> str:
    return clip_name(name, 44)


def _ratio(v, peak) -> float:
    if _isnan(v) or peak is None or _isnan(peak) or not peak:
        return math.nan
    return 100.0 * float(v) / float(peak)


def _num(v) -> str:
    return "-" if v is None or _isnan(v) else f"{float(v):.3g}"


def format_sol(res: SolResult, top: int | None = None) -> str:
    if res.kernels is None or len(res.kernels) == 0:
        return ("No hardware counters in these databases: profile with `rocprof run --sol` (or "
                "--pmc with the speed-of-light counters) to get them.\n")
    if len(res.run) == 0:
        names = sorted(c for c in res.dispatches.columns if "__" in c or c.isupper())
        return ("These databases hold counters, but none that speed of light is computed from "
                f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}): profile with "
                "`rocprof run --sol`.\n")
    return format_run(res) + "\n" + format_kernels(res, top)


def to_json(res: SolResult) -> dict:
    """The run and per-kernel speed of light as plain data (``rocpd sol --json``)."""
    def clean(v):
        return None if isinstance(v, float) and math.isnan(v) else v

    kernels = []
    for _, r in res.kernels.iterrows():
        entry = {"agent_id": int(r["agent_id"]), "kernel": r["kernel_name"],
                 "dispatches": int(r["dispatches"]), "seconds": float(r["seconds"]),
                 "dominant": dominant(r), "metrics": {}}
        for row in rows():
            v = value_of(r, row.key)
            if not _isnan(v):
                peak = r.get(f"peak_{row.key}", math.nan)
                entry["metrics"][row.key] = {"value": v, "unit": row.unit, "peak": clean(float(peak)),
                                             "pct_of_peak": clean(_ratio(v, peak))}
        entry["intensity_dram"] = clean(float(r.get("intensity_dram", math.nan)))
        kernels.append(entry)
    run = [{k: clean(v) for k, v in rec.items()} for rec in res.run.to_dict("records")]
    return {"run": run, "kernels": kernels}
