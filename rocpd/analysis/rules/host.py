"""The rules about the GPU waiting for the host: inside the steps (launch-/host-bound, whatever
the host was doing: launching, waiting, working), after waits (synchronisations, copies to
host), between steps, and the start-up before the first step, reported apart.

A finding is named by what the GPU shows (where it idles), so that a kernel-only trace and a
trace with API calls give the same finding; the API calls and samples name the cause: a wait
whose host went straight on to the next launch, or the host work (rocpd.analysis.hostwork) that delayed it.
"""

from __future__ import annotations

import numpy as np

from .. import scope
from ..findings import Finding, _ms, _pct, _us
from ..hostwork import summarise

IDLE_MIN = 0.30            # launch/host-bound: GPU idle at least this share of the steps ...
HOST_LATE_OF_IDLE = 0.5    # ... most of it waiting for the host (late launches or waits)
SHORT_SHARE = 0.5          # launch-bound (not just host-bound): most kernels are short
LAUNCH_GAP_NS = 50_000     # without API calls: gaps this short between kernels are launch gaps
SYNC_IDLE_MIN = 0.10       # GPU idle charged to host waits
SYNC_PER_LAUNCH_MIN = 0.2  # or: a wait after at least 1 of every 5 launches, with some idle
BETWEEN_STEPS_MIN = 0.20
STARTUP_MIN = 0.10         # start-up is reported when it takes this share of the time to the last step

_WAITS = {"sync": ("synchronize", "sync-after-launch", "a device synchronisation"),
          "d2h": ("copy to host", "copy-to-host", "a copy to the host")}


def _waits_of(a, kind):
    w = a.waits
    return w[w["Kind"] == _WAITS[kind][0]] if len(w) else w


def _launches(a) -> int:
    """Kernel launches seen as API calls (copies are not kernel launches)."""
    return sum(p.launched_kernels() for p in a.processes)


def _wait_phrase(a, kind) -> tuple[str, list[str]]:
    """'a device synchronisation follows 1 of every 1.0 kernel launches (train.py:42)', sites."""
    w = _waits_of(a, kind)
    calls = int(w["Calls"].sum()) if len(w) else 0
    launches = _launches(a)
    every = launches / calls if calls else float("inf")
    site = f" ({w.iloc[0]['Site']})" if len(w) else ""
    sites = [p for p in w.head(3)["Path"] if isinstance(p, str)] if len(w) else []
    return f"{_WAITS[kind][2]} follows 1 of every {every:.1f} kernel launches{site}", sites


def _wait_suggestion(kind) -> str:
    if kind == "sync":
        return ("remove torch.cuda.synchronize() (and stream/event synchronisations) from the "
                "step; time with CUDA events or the profiler instead of synchronising")
    return ("avoid .item(), .cpu(), .tolist() or printing GPU tensors every step: keep running "
            "metrics on the GPU and read them every N steps; use non_blocking=True copies into "
            "pinned memory")


def waiting_in_steps(a):
    """The launch-/host-bound diagnosis, computed once: None, or a dict with the totals, whether
    it was judged from the GPU side alone, and its cause ("sync", "d2h" or "host")."""
    if "waiting" in a._cache:
        return a._cache["waiting"]
    a._cache["waiting"] = out = _waiting(a)
    return out


def _waiting(a):
    tot, unit = scope.windows(a)
    if tot is None or not tot["SpanNs"]:
        return None
    span = float(tot["SpanNs"])
    if tot["IdleNs"] / span < IDLE_MIN:
        return None
    gpu_only = tot["UnknownNs"] >= HOST_LATE_OF_IDLE * tot["IdleNs"]
    host = float(tot["HostLateNs"] + tot["SyncNs"])
    if gpu_only:
        if scope.median_gap(a) > LAUNCH_GAP_NS:
            return None
        return {"tot": tot, "unit": unit, "gpu_only": True, "cause": None,
                "score": float(tot["UnknownNs"]) / span}
    if host < HOST_LATE_OF_IDLE * tot["IdleNs"]:
        return None
    waited = {k: scope.waited_idle(a, k, in_windows=True) for k in _WAITS}
    kind = max(waited, key=waited.get)
    cause = kind if waited[kind] > tot["HostLateNs"] else "host"
    return {"tot": tot, "unit": unit, "gpu_only": False, "cause": cause, "score": host / span}


def launch_bound(a) -> list[Finding]:
    """The GPU waits for the host inside the steps. With API calls recorded, the gaps whose next
    launch came late or after a wait say so (and which); without them (kernel tracing only) the
    GPU side alone is read: kernels separated by short, launch-sized gaps."""
    w = waiting_in_steps(a)
    if w is None:
        return []
    tot, unit = w["tot"], w["unit"]
    span = float(tot["SpanNs"])
    idle = tot["IdleNs"] / span
    short, k = scope.short_share(a)
    ls = a.launch_summary
    where = "in the steps" if unit == "of each step" else ""
    ev = [f"GPU idle {_ms(tot['IdleNs'])} of {_ms(span)} {where}".rstrip()]
    if w["gpu_only"]:
        ev.append(f"no API calls recorded, judged from the GPU side: median gap between kernels "
                  f"{_us(scope.median_gap(a))}, about what one launch costs the host")
    else:
        ev.append(f"{_pct(w['score'])} of the GPU's time is spent waiting for the next launch "
                  "(the host submitted it only after the GPU had run dry)")
    if k:
        ev.append(f"{_pct(short)} of {k} kernels run < {_us(a.short_ns)}; median kernel "
                  f"{_us(float(ls['GpuMedianNs'].median()))}")
        lm = ls["LaunchMeanNs"].dropna()
        if len(lm):
            ev.append(f"a launch call takes {_us(float(lm.mean()))} on the host on average")
        faster = ls["ShorterThanLaunchPercent"].dropna()
        if len(faster):
            ev.append(f"{float(faster.mean()):.0f} % of kernels finish faster than the host can "
                      "launch them")
    top = a.lines.head(3)
    sites = list(top["Path"]) if len(top) else []
    if sites:
        ev.append("most GPU work is launched from " + ", ".join(
            f"{s} ({p:.0f} %)" for s, p in zip(top["Site"], top["Percent"], strict=True)))
    cause = ""
    if w["cause"] in _WAITS:
        phrase, wait_sites = _wait_phrase(a, w["cause"])
        cause = f"; {phrase}"
        ev.insert(1, f"{_ms(scope.waited_idle(a, w['cause'], True))} of it begins as such a wait "
                  "returns and ends at the next launch, which the host made straight away")
        sites = wait_sites or sites
    elif w["cause"] == "host":
        hw = summarise(a, lambda p, g: (g["cause"] == "HostLateNs").to_numpy()
                       & (g["step"] >= 0).to_numpy())
        if hw.lines or hw.ranges:
            cause = f"; {hw.cause()}"
            sites = hw.sites() or sites
        ev += [e for e in hw.evidence() if not e.startswith("what the host did")] if hw.lines or \
            hw.ranges else []
    if short >= SHORT_SHARE:
        title = (f"GPU idle {_pct(idle)} {unit}; {_pct(short)} of kernels run < {_us(a.short_ns)}: "
                 f"the step is launch-bound{cause}")
        sugg = ("give the GPU more work per launch: a larger batch, fused operations "
                "(torch.compile), or replay the step as a CUDA/HIP graph "
                "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.graphs)")
        rule = "launch-bound"
    else:
        title = (f"GPU idle {_pct(idle)} {unit}, waiting for the host to launch work: the step is "
                 f"host-bound{cause}")
        sugg = ("find what the host does between launches (rocprof run --sample shows the Python "
                "stacks); move data preparation to DataLoader workers; keep the step's Python lean")
        rule = "host-bound"
    if w["cause"] in _WAITS:
        sugg = _wait_suggestion(w["cause"]) + "; then " + sugg
    elif w["gpu_only"]:
        sugg += ("; trace the runtime API (--sys-trace) to see whether waits "
                 "(synchronisations, copies to host) cause the gaps")
    return [Finding(rule, title, sugg, w["score"], ev, sites)]


def host_waits(a) -> list[Finding]:
    """Synchronisations (and copies to host) after which the host went straight on to launch:
    the wait drained the GPU's queue. Counted in the steps part; a wait the launch-/host-bound
    finding already names as its cause is not reported twice."""
    tot = scope.steps_total(a)
    if tot is None:
        return []
    span = float(tot["SpanNs"])
    launches = _launches(a)
    w_in = waiting_in_steps(a)
    out = []
    for kind, (label, rule, _) in _WAITS.items():
        w = _waits_of(a, kind)
        if w.empty or (w_in is not None and w_in["cause"] == kind):
            continue
        calls, idle_ns = int(w["Calls"].sum()), scope.waited_idle(a, kind)
        per_launch = calls / launches if launches else 0.0
        share = idle_ns / span
        if share < SYNC_IDLE_MIN and not (per_launch >= SYNC_PER_LAUNCH_MIN and share >= 0.02):
            continue
        phrase, sites = _wait_phrase(a, kind)
        scope_word = "of the steps" if a.step_name else "of the run"
        title = f"{phrase}; the GPU idles {_pct(share)} {scope_word} waiting for the host after it"
        ev = [f"{calls} {label} calls ({', '.join(sorted(set(w['Example'])))[:80]}) for {launches} "
              f"launches; the host was blocked in them for {_ms(float(w['BlockedNs'].sum()))}",
              f"{_ms(idle_ns)} of GPU idle time begins as such a call returns and ends at the "
              "next launch, which the host made straight away"]
        for r in w.head(3).itertuples():
            ev.append(f"{r.Site}: {r.Calls} calls, {_ms(r.GpuIdleNs)} GPU idle after them")
        out.append(Finding(rule, title, _wait_suggestion(kind), share, ev, sites))
    return out


def between_steps(a) -> list[Finding]:
    """The GPU idles between one step's work and the next's: the host works there (data
    loading, logging, evaluation). Idle a wait caused (the host launched straight after it) is
    the wait's; host work after a wait is this finding's, named by hostwork."""
    if a.step_name is None:
        return []
    tot = scope.steps_total(a)
    if tot is None:
        return []
    span = float(tot["SpanNs"])
    between = float(tot["BetweenStepsNs"])
    share = between / span
    if share < BETWEEN_STEPS_MIN:
        return []
    hw = summarise(a, lambda p, g: scope.in_scope(a, p, g) & (g["step"] < 0).to_numpy()
                   & (g["cause"] != "SyncNs").to_numpy())
    cause = hw.cause()
    title = (f"GPU idle {_pct(share)} of the steps' time between steps ('{a.step_name}')"
             + (f": {cause}" if cause else ""))
    ev = [f"{_ms(between)} of {_ms(span)} with no GPU work between one step's last kernel and the "
          "next step's first"] + hw.evidence()
    sugg = ("look at what runs between steps (data loading, logging, checkpoints, evaluation): "
            "DataLoader(num_workers>0, pin_memory=True, persistent_workers=True), log less often")
    if hw.after_wait >= 0.5:
        sugg += ("; the wait before that work (.item(), a synchronisation) keeps it from "
                 "overlapping the GPU's work: read results every N steps")
    return [Finding("idle-between-steps", title, sugg, share, ev, hw.sites())]


def startup(a) -> list[Finding]:
    """Start-up (process start, or first activity, to the first step) apart from the steps: how
    long, how busy the GPU was, and what the host did there."""
    if a.step_name is None:
        return []
    steps = a._core()[4]
    parts = a._core()[5]
    if steps.empty or parts.empty:
        return []
    host_ns, total_ns = 0, 0
    for p in a.processes:
        mine = steps[steps["pid"] == p.pid]
        if mine.empty:
            continue
        first = [p.start] if p.start else []
        first += [p.gpu_span()[0]] if p.gpu_ops else []
        first += [int(p.api["start"].min())] if len(p.api) else []
        first += [int(p.ranges["start"].min())] if len(p.ranges) else []
        t0 = min(first)
        host_ns += max(0, int(mine["start"].min()) - t0)
        total_ns += max(0, int(mine["end"].max()) - t0)
    if not total_ns or host_ns / total_ns < STARTUP_MIN:
        return []
    su = parts[parts["part"] == "startup"]
    busy, span = float(su["BusyNs"].sum()), float(su["SpanNs"].sum())
    ev = [f"GPU busy {_ms(busy)} of the {_ms(span)} from its first activity to the first step "
          f"({int(su['Kernels'].sum())} kernels, {int(su['Copies'].sum())} copies)"]
    hw = summarise(a, lambda p, g: _before_steps(a, g))
    if hw.lines or hw.ranges:
        ev += [e for e in hw.evidence() if not e.startswith("what the host did")]
    title = (f"start-up: {_ms(host_ns)} before the first step ({_pct(host_ns / total_ns)} of the "
             "time up to the last step), reported apart: the findings above cover the steps")
    sugg = ("if start-up matters (short jobs, many restarts): cache data sets, load checkpoints "
            "lazily, warm up with fewer iterations; rocpd analyze --section parts shows it per GPU")
    return [Finding("startup", title, sugg, host_ns / total_ns, ev, hw.sites() if hw.lines else [],
                    level="info")]


def _before_steps(a, gaps):
    parts = a._core()[5]
    su = parts[parts["part"] == "startup"]
    mask = np.zeros(len(gaps), dtype=bool)
    gpu, s, e, pid = (gaps[c].to_numpy() for c in ("gpu", "start", "end", "pid"))
    for r in su.itertuples():
        mask |= (pid == r.pid) & (gpu == r.gpu) & (s >= r.start) & (e <= r.end)
    return mask


RULES = (launch_bound, host_waits, between_steps, startup)
