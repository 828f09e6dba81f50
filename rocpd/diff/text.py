"""A diff as text: the verdict line and the tables, regressions first, as ``rocpd diff`` prints
them (and ``print(d)`` in a notebook)."""

from __future__ import annotations

import math
import os

import pandas as pd

from .energy import text as energy_text
from .memory import text as memory_text
from .memory import verdict as memory_verdict
from .runs import RECOMMENDED_RUNS

UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
NAME_WIDTH = 60


def fmt_ns(v: float, units: str, sign: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    x = v / UNITS[units]
    return f"{x:+,.3f}" if sign else f"{x:,.3f}"


def ci(lo: float, hi: float, units: str) -> str:
    if lo != lo or hi != hi:  # NaN: too few steps
        return "n/a"
    return f"[{fmt_ns(lo, units, True)}, {fmt_ns(hi, units, True)}]"


def pct(v: float) -> str:
    return "" if v != v else f"{v:+.1f}%"


def _clip(s: str, width: int = NAME_WIDTH) -> str:
    """``s`` in at most ``width`` characters, its middle elided; a paired name ("a → b": the
    kernels of one line in two runs) keeps its arrow and both ends."""
    s = str(s)
    if len(s) <= width:
        return s
    if " → " in s:
        a, b = s.split(" → ", 1)
        half = (width - 3) // 2
        return f"{_clip(a, half)} → {_clip(b, width - 3 - half)}"
    tail = min(17, (width - 3) // 2)
    return s[: width - 3 - tail] + "..." + s[-tail:]


def describe(row, units: str) -> str:
    """'model.py:23 kernel gemm_out +75.312 us per step [+74.1, +76.4] (+30.1%), slower'."""
    what = " ".join(x for x in (str(row.get("line", "")), str(row.get("kind", "")),
                                _clip(row.get("name", row.get("phase", row.get("metric", "")))))
                    if x)
    return (f"{what} {fmt_ns(row['DeltaNs'], units, True)} {units} per step "
            f"{ci(row['CiLowNs'], row['CiHighNs'], units)}"
            + (f" ({pct(row['DeltaPercent'])})" if row["DeltaPercent"] == row["DeltaPercent"] else "")
            + f", {row['verdict']}")


def verdict(d, units: str = "us") -> str:
    """The largest significant change of the step's work, then energy per step's verdict when
    it changed significantly (a step as fast but hungrier is a regression of its own), then the
    GPU memory peak when it changed (rocpd.diff.memory)."""
    return _time_verdict(d, units) + _energy_verdict(d.energy) + memory_verdict(d.memory)


def _energy_verdict(df) -> str:
    if df is None or not len(df) or not bool(df.iloc[0]["significant"]):
        return ""
    x = df.iloc[0]
    return (f"; energy per step {x['verdict']}: {x['DeltaJ']:+,.3f} J"
            f" ({x['DeltaPercent']:+.1f}%)")


def _time_verdict(d, units: str) -> str:
    sig = d.significant
    step = d.summary.iloc[0]
    if not len(sig) and bool(step["significant"]):
        return (f"step time {step['verdict']} ({fmt_ns(step['DeltaNs'], units, True)} {units} "
                f"{ci(step['CiLowNs'], step['CiHighNs'], units)}, {pct(step['DeltaPercent'])}) with"
                " no single piece of work changed significantly: a change spread over all of"
                " them (clocks, a library version, contention)")
    if not len(sig):
        lead = "no significant change"
        if not (d.base.procs and d.new.procs) or min(d.steps_base, d.steps_new) < 2:
            lead = "no significant change can be shown (too few steps)"
        elif _host_noise(d, units) and d.base.gpu:
            lead = "no significant change in GPU work"
        return (f"{lead}: step time {fmt_ns(step['BaseNs'], units)} -> "
                f"{fmt_ns(step['NewNs'], units)} {units} "
                f"({fmt_ns(step['DeltaNs'], units, True)} {ci(step['CiLowNs'], step['CiHighNs'], units)})"
                f"{_step_parts(d, step, units)}{_host_noise(d, units)}")
    first = sig.iloc[0]
    n = len(sig)
    return (f"{n} significant change{'s' if n > 1 else ''}; first: {describe(first, units)}"
            f"{_waited_for(d, first, units)}; step time {fmt_ns(step['DeltaNs'], units, True)} "
            f"{units} {ci(step['CiLowNs'], step['CiHighNs'], units)}{_step_parts(d, step, units)}"
            f"{'' if bool(first.get('host', False)) else _host_noise(d, units)}")


def _step_parts(d, step, units: str) -> str:
    """Where the step time's change is the host's (rocpd.diff.runs), its parts: a line slower
    while the step is shorter reads as the host's pace, which moved more."""
    if not bool(step.get("host", False)) or bool(step["significant"]) or not d.base.gpu:
        return ""
    gpu = d.summary.set_index("metric").loc["GPU work (sum of op times)", "DeltaNs"]
    rest = float(step["DeltaNs"]) - float(gpu)
    return (f" (GPU work {fmt_ns(gpu, units, True)} {units}; the rest, the host's pace,"
            f" {fmt_ns(rest, units, True)} {units}: {_noise_words(d)})")


def _noise_words(d) -> str:
    ka, kb = d.base.runs, d.new.runs
    if max(ka, kb) >= 2:
        return f"judged against the spread of {ka} + {kb} runs"
    return "within run-to-run noise unless repeated"


def _host_noise(d, units: str) -> str:
    """The largest host-side change held back by the between-run noise, and how to judge it."""
    it = d.items
    if it is None or not len(it) or "noisy" not in it:
        noisy = it.iloc[0:0] if it is not None else None
    else:
        noisy = it[it["noisy"].astype(bool)]
    step = d.summary.iloc[0]
    if noisy is None or not len(noisy):
        if not bool(step.get("noisy", False)):
            return ""
        what = f"step time {fmt_ns(step['DeltaNs'], units, True)} {units} ({pct(step['DeltaPercent'])})"
    else:
        what = describe(noisy.iloc[noisy["DeltaNs"].abs().argmax()], units)
    return f"; host-side: {what}{_repeat(d)}"


def _repeat(d) -> str:
    """The command that repeats the runs, with one run per side."""
    if max(d.base.runs, d.new.runs) >= 2:
        return f" ({d.base.runs} + {d.new.runs} runs)"
    n = RECOMMENDED_RUNS
    a = " ".join([_argument(d.base.paths)] + [f"A{i}" for i in range(2, n + 1)])
    b = " ".join([_argument(d.new.paths)] + [f"B{i}" for i in range(2, n + 1)])
    return (f"; to judge host-side changes, record each run {n - 1} more times (A2.., B2..) and"
            f" give them all: rocpd diff {a} -- {b}")


def _waited_for(d, first, units: str) -> str:
    """Over several ranks, a collective that got slower is mostly the others waiting in it for
    the slowest rank: that rank's own first regression outside the collectives is the cause."""
    if d.slowest is None or first.get("kind") != "collective":
        return ""
    own = d.slowest.significant
    own = own[(own["kind"] != "collective") & (own["DeltaNs"] > 0)]
    if not len(own):
        return ""
    return (f", the ranks waiting in it for {d.slowest.scope} (most compute per step), whose own"
            f" first change is {describe(own.iloc[0], units)}")


def _more(df, shown) -> str:
    """The line under a table cut at --top: how many rows it leaves out."""
    return f"\n... and {len(df) - len(shown)} more (use --top 0)" if len(df) > len(shown) else ""


def _table(df, key_cols, units, top, extra=()) -> str:
    if df is None or not len(df):
        return "(none)"
    shown = df.head(top) if top else df
    out = pd.DataFrame({c: shown[c].map(_clip) for c in key_cols})
    out[f"base {units}"] = shown["BaseNs"].map(lambda v: fmt_ns(v, units))
    out[f"new {units}"] = shown["NewNs"].map(lambda v: fmt_ns(v, units))
    out[f"delta {units}"] = shown["DeltaNs"].map(lambda v: fmt_ns(v, units, True))
    out["CI"] = [ci(a, b, units) for a, b in zip(shown["CiLowNs"], shown["CiHighNs"], strict=True)]
    out["change"] = shown["DeltaPercent"].map(pct)
    out["verdict"] = shown["verdict"]
    for c in extra:
        out[c] = shown[c].map(lambda v: _clip(v) if isinstance(v, str) else f"{v:g}")
    return out.to_string(index=False) + _more(df, shown)


def _appeared(df, units, top) -> str:
    if df is None or not len(df):
        return "(nothing appeared or vanished)"
    shown = df.head(top) if top else df
    out = pd.DataFrame({"what": shown["what"], "line": shown["line"],
                        "name": shown["name"].map(_clip),
                        "per step": [f"{a:g} -> {b:g}" for a, b in
                                     zip(shown["BaseCount"], shown["NewCount"], strict=True)],
                        f"delta {units}": shown["DeltaNs"].map(lambda v: fmt_ns(v, units, True)),
                        "significant": shown["significant"].map(lambda v: "yes" if v else "no")})
    return out.to_string(index=False) + _more(df, shown)


def _ranks(df, units, top) -> str:
    shown = df.head(top) if top else df
    out = pd.DataFrame({"rank": shown["rank"]})
    out[f"step base {units}"] = shown["BaseNs"].map(lambda v: fmt_ns(v, units))
    out[f"step new {units}"] = shown["NewNs"].map(lambda v: fmt_ns(v, units))
    out[f"delta {units}"] = shown["DeltaNs"].map(lambda v: fmt_ns(v, units, True))
    out["CI"] = [ci(a, b, units) for a, b in zip(shown["CiLowNs"], shown["CiHighNs"], strict=True)]
    out[f"compute new {units}"] = shown["NewComputeNs"].map(lambda v: fmt_ns(v, units))
    out["largest change"] = shown["top_change"].map(lambda s: _clip(s, 80))
    return out.to_string(index=False) + _more(df, shown)


def _argument(paths) -> str:
    """The databases of a run as one command-line argument: the file, or their folder."""
    if len(paths) == 1:
        return paths[0]
    try:
        return os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) + "/"
    except ValueError:
        return paths[0]


def where(paths) -> str:
    """The databases of a run: their names, or how many in which folder."""
    if len(paths) <= 2:
        return ", ".join(paths)
    try:
        folder = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths])
    except ValueError:
        folder = ""
    return f"{len(paths)} databases" + (f" in {folder}" if folder else "")


def rule(d, units: str = "us") -> str:
    """When a change counts, with the step-based floors in time per step."""
    s = d.settings
    step = float(d.summary.iloc[0]["BaseNs"]) if len(d.summary) else float("nan")
    idle = max(s.min_idle, s.min_share)
    if max(d.base.runs, d.new.runs) >= 2:
        runs = (f"a host-side change also outside the {s.confidence:.0%} t interval of the"
                f" {d.base.runs} + {d.new.runs} runs' own figures (their run-to-run spread)")
    elif math.isinf(s.run_noise):
        runs = ("a host-side change (GPU idle, host waits, step time that GPU work does not"
                " explain) never with one run per side: host-side time moves 20-30 % from run"
                " to run, so the verdict rests on GPU work; repeat the runs to judge the host")
    else:
        runs = (f"a host-side change (GPU idle, host waits, step time that GPU work does not"
                f" explain{'' if d.base.gpu else ', all of a run without GPU work'}) also >="
                f" {s.run_noise:.0%} of a baseline step ({fmt_ns(s.run_noise * step, units)}"
                f" {units}): host-side time moves by tens of per cent from run to run, one run"
                f" per side cannot tell less")
    return (f"the interval excludes 0, the change is >= {s.min_change:.0%} of the time and >= "
            f"{s.min_share:.1%} of a baseline step ({fmt_ns(s.min_share * step, units)} {units});"
            f" a change that is mostly GPU idle (the host's pace) >= {idle:.1%} of a baseline step"
            f" ({fmt_ns(idle * step, units)} {units}); {runs}")


def header(d, units: str = "us") -> list[str]:
    s = d.settings
    lines = []
    for side, n in ((d.base, d.steps_base), (d.new, d.steps_new)):
        step = {"given": f"'{side.step_name}' (given)", "detected": f"'{side.step_name}' (detected)",
                "none": "none found: the whole run is one step",
                "off": "off: the whole run is one step"}[side.step_source]
        what = "with GPU work" if side.gpu else "without GPU work (ROCTx ranges and samples)"
        runs = f"{side.runs} run{'s' if side.runs != 1 else ''}, " if side.runs > 1 else ""
        lines.append(f"{side.label}: {where(side.paths)} — {runs}{len(side.procs)} process(es)"
                     f" {what}, {n} step(s); step range {step}")
    stat = s.statistic() if d.base.gpu else (
        "per step: the mean over the steps of the time in each ROCTx range (its inner ranges"
        " left out) and of each sampled line (its samples times the sampling period)")
    lines.append(f"{stat}; {s.confidence:.0%} intervals from {s.resamples} bootstrap"
                 f" resamples of the steps (seed {s.seed}), of that same figure; significant:"
                 f" {rule(d, units)}")
    return lines


def body(d, top: int, units: str) -> list[str]:
    out = [f"verdict: {d.verdict(units)}"]
    out += [f"note: {n}" for n in d.notes]
    out += ["", "== STEP ==", _table(d.summary, ["metric"], units, 0)]
    if d.energy is not None:
        out.append(energy_text(d.energy))
    if getattr(d, "memory", None) is not None:
        out.append(memory_text(d.memory))
    out += ["", "== CHANGES, REGRESSIONS FIRST (line, kind, kernel) ==",
            _table(d.items, ["line", "kind", "name"], units, top, ("note",))]
    out += ["", "== LINES ==", _table(d.lines, ["line"], units, top, ("top_item",))]
    out += ["", "== KERNELS ==", _table(d.kernels, ["name", "kind"], units, top)]
    out += ["", "== PHASES ==", _table(d.phases, ["phase"], units, 0)]
    out += ["", "== APPEARED OR VANISHED ==", _appeared(d.appeared, units, top)]
    return out


def report(d, top: int = 10, units: str = "us") -> str:
    out = [f"rocpd diff ({d.scope})", *header(d, units), *body(d, top, units)]
    if d.ranks is not None and len(d.ranks):
        out += ["", "== RANKS (most compute per step in the new run first) ==",
                _ranks(d.ranks, units, top)]
    if d.slowest is not None:
        out += ["", f"== SLOWEST RANK OF THE NEW RUN: {d.slowest.scope} (most compute per step) =="]
        out += body(d.slowest, top, units)
    return "\n".join(out)
