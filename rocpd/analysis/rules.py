"""The findings rules (see findings.py for what a finding is and how they are ranked). Each
rule reads an :class:`~rocpd.analysis.Analysis` and returns the findings its pattern shows, with
the numbers as evidence and what to do about it."""

from __future__ import annotations

from .activity import short_site
from .findings import Finding, _ms, _pct, _us

# Thresholds (fractions of the analysed GPU time unless said otherwise).
IDLE_MIN = 0.30            # launch/host-bound: GPU idle at least this share of the steps ...
HOST_LATE_OF_IDLE = 0.5    # ... most of it because the host launched late
SHORT_SHARE = 0.5          # launch-bound (not just host-bound): most kernels are short
LAUNCH_GAP_NS = 50_000     # without API calls: gaps this short between kernels are launch gaps
SYNC_IDLE_MIN = 0.10       # GPU idle charged to host waits
SYNC_PER_LAUNCH_MIN = 0.2  # or: a wait after at least 1 of every 5 launches, with some idle
PAGEABLE_MIN = 0.01        # pageable H2D copies in the steps: at least this share of the time
BLOCKED_COPY_MIN_NS = 10_000
COMM_OF_BUSY = 0.40        # collectives take this share of the GPU's busy time
LOW_OVERLAP = 0.20         # ... and overlap compute less than this
COMM_EXPOSED_MIN = 0.10  # communication with no compute beside it: this share of the time
STRAGGLER_MIN = 0.10       # a process computes this much longer per step than the median
BETWEEN_STEPS_MIN = 0.20
MEMORY_MIN = 0.25
UNKNOWN_MIN = 0.20



def _scope(a):
    """Totals over the analysed windows: every step (when there are steps) or the run."""
    rows = a._core()[1]
    if len(rows):
        rows = rows[rows["SpanNs"] > 0]
        unit = "of each step"
    if not len(rows):
        rows = a.run
        unit = "of the run"
    if not len(rows):
        return None, unit
    cols = ["SpanNs", "ComputeNs", "CommunicationNs", "MemoryNs", "IdleNs", "HostLateNs", "SyncNs",
            "OtherNs", "UnknownNs", "Kernels", "Copies"]
    return rows[cols].sum(), unit


def _short_share(a) -> tuple[float, int]:
    ls = a.launch_summary
    k = int(ls["Kernels"].sum()) if len(ls) else 0
    return (float((ls["ShortPercent"] * ls["Kernels"]).sum() / k / 100.0) if k else 0.0), k


def _median_gap(a) -> float:
    """Median GPU idle gap inside the steps (or the run), ns."""
    import numpy as np

    lens = [(g["end"] - g["start"]).to_numpy()[(g["step"] >= 0).to_numpy() if a.step_name else
                                                slice(None)] for g in a.gaps if len(g)]
    lens = [x for x in lens if len(x)]
    return float(np.median(np.concatenate(lens))) if lens else float("inf")


def launch_bound(a) -> list[Finding]:
    """The GPU waits for the host to launch work. With API calls recorded, the idle gaps whose
    next launch came late say so; without them (kernel tracing only) the GPU side alone is read:
    many short kernels separated by short, launch-sized gaps."""
    tot, unit = _scope(a)
    if tot is None or not tot["SpanNs"]:
        return []
    span = float(tot["SpanNs"])
    idle, late = tot["IdleNs"] / span, tot["HostLateNs"] / span
    short, k = _short_share(a)
    gpu_only = tot["UnknownNs"] >= HOST_LATE_OF_IDLE * tot["IdleNs"]
    if idle < IDLE_MIN:
        return []
    if gpu_only:
        gap = _median_gap(a)
        if short < SHORT_SHARE or gap > LAUNCH_GAP_NS:
            return []
        score = float(tot["UnknownNs"]) / span
    elif tot["HostLateNs"] < HOST_LATE_OF_IDLE * tot["IdleNs"]:
        return []
    else:
        score = late
    ls = a.launch_summary
    where = unit.replace("of each", "in the") + "s" if unit == "of each step" else ""
    ev = [f"GPU idle {_ms(tot['IdleNs'])} of {_ms(span)} {where}".rstrip()]
    if gpu_only:
        ev.append(f"no API calls recorded, judged from the GPU side: median gap between kernels "
                  f"{_us(_median_gap(a))}, about what one launch costs the host")
    else:
        ev.append(f"{_pct(late)} of the GPU's time is spent waiting for the next launch (the "
                  "host submitted it only after the GPU had run dry)")
    if k:
        med = float(ls["GpuMedianNs"].median())
        ev.append(f"{_pct(short)} of {k} kernels run < {_us(a.short_ns)}; median kernel {_us(med)}")
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
    if short >= SHORT_SHARE:
        title = (f"GPU idle {_pct(idle)} {unit}; {_pct(short)} of kernels run < {_us(a.short_ns)}: "
                 "the step is launch-bound")
        sugg = ("give the GPU more work per launch: a larger batch, fused operations "
                "(torch.compile), or replay the step as a CUDA/HIP graph "
                "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.graphs)")
        rule = "launch-bound"
    else:
        title = (f"GPU idle {_pct(idle)} {unit}, waiting for the host to launch work: the step is "
                 "host-bound")
        sugg = ("find what the host does between launches (rocprof run --sample shows the Python "
                "stacks); move data preparation to DataLoader workers; keep the step's Python lean")
        rule = "host-bound"
    return [Finding(rule, title, sugg, score, ev, sites)]


def _waits(a, kind):
    w = a.waits
    return w[w["Kind"] == kind] if len(w) else w


def _charged_idle(a, kind: str) -> float:
    """GPU idle time (ns, whole run) charged to blocking calls of ``kind`` ("sync"/"d2h")."""
    total = 0.0
    for gaps, blocking in zip(a.gaps, a.blocking, strict=True):
        if gaps.empty or blocking.empty:
            continue
        g = gaps[gaps["call"] >= 0]
        kinds = blocking["blocking"].to_numpy()[g["call"].to_numpy()]
        total += float((g["end"] - g["start"])[kinds == kind].sum())
    return total


def host_waits(a) -> list[Finding]:
    """Synchronisations (and copies to host) that leave the GPU idle while the host waits."""
    run = a.run
    span = float(run["SpanNs"].sum()) if len(run) else 0.0
    if not span:
        return []
    launches = sum(int(p.gpu["launch_start"].notna().sum()) for p in a.processes)
    out = []
    for kind, code, rule in (("synchronize", "sync", "sync-after-launch"),
                             ("copy to host", "d2h", "copy-to-host")):
        w = _waits(a, kind)
        if w.empty:
            continue
        calls, idle_ns = int(w["Calls"].sum()), _charged_idle(a, code)
        per_launch = calls / launches if launches else 0.0
        share = idle_ns / span
        if share < SYNC_IDLE_MIN and not (per_launch >= SYNC_PER_LAUNCH_MIN and share >= 0.02):
            continue
        top = w.iloc[0]
        every = launches / calls if calls else float("inf")
        what = "a device synchronisation" if kind == "synchronize" else "a copy to the host"
        title = (f"{what} follows 1 of every {every:.1f} kernel launches ({top['Site']}); the GPU "
                 f"idles {_pct(share)} of the run waiting for the host after it")
        ev = [f"{calls} {kind} calls ({', '.join(sorted(set(w['Example'])))[:80]}) for {launches} "
              f"launches; the host was blocked in them for {_ms(float(w['BlockedNs'].sum()))}",
              f"{_ms(idle_ns)} of GPU idle time begins as such a call returns and ends at the "
              "next launch"]
        for r in w.head(3).itertuples():
            ev.append(f"{r.Site}: {r.Calls} calls, {_ms(r.GpuIdleNs)} GPU idle after them")
        if kind == "synchronize":
            sugg = ("remove torch.cuda.synchronize() (and stream/event synchronisations) from the "
                    "step; time with CUDA events or the profiler instead of synchronising")
        else:
            sugg = ("avoid .item(), .cpu(), .tolist() or printing GPU tensors every step: keep "
                    "running metrics on the GPU and read them every N steps; use "
                    "non_blocking=True copies into pinned memory")
        sites = [p for p in w.head(3)["Path"] if isinstance(p, str)]
        out.append(Finding(rule, title, sugg, share, ev, sites))
    return out


def pageable_copies(a) -> list[Finding]:
    tot, unit = _scope(a)
    if tot is None or not tot["SpanNs"]:
        return []
    span = float(tot["SpanNs"])
    rows, measured = [], True
    for p in a.processes:
        g = p.gpu
        h2d = g[g["direction"] == "H2D"]
        if h2d.empty:
            continue
        steps = a._core()[4]
        mine = steps[steps["pid"] == p.pid] if len(steps) else steps
        if len(mine):
            from .steps import assign

            in_step = assign(p, mine)[(g["direction"] == "H2D").to_numpy()] >= 0
            h2d = h2d[in_step]
        known = h2d["src_memory"] != ""
        if known.any():
            rows.append(h2d[known & (h2d["src_memory"] == "PAGEABLE")])
        else:  # memory kinds not recorded: a host blocked for the whole copy is the sign
            measured = False
            blocked = h2d["launch_end"].notna() & (h2d["launch_start"] <= h2d["start"]) & \
                (h2d["launch_end"] >= h2d["end"]) & (h2d["duration"] >= BLOCKED_COPY_MIN_NS)
            rows.append(h2d[blocked])
    if not rows:
        return []
    import pandas as pd

    c = pd.concat(rows, ignore_index=True)
    share = float(c["duration"].sum()) / span if len(c) else 0.0
    if c.empty or share < PAGEABLE_MIN:
        return []
    where = c["site"].dropna()
    top_sites = list(where.value_counts().index[:3])
    loc = f" ({short_site(top_sites[0])})" if top_sites else ""
    scope = "inside the step" if unit == "of each step" else "during the run"
    how = "from pageable memory" if measured else "that block the host for their whole duration (as copies from pageable memory do)"
    title = f"{len(c)} host-to-device copies {scope} {how}{loc}"
    ev = [f"{len(c)} copies, {c['bytes'].fillna(0).sum() / 1e6:.1f} MB, {_ms(float(c['duration'].sum()))} "
          f"on the GPU ({_pct(share)} {unit})"]
    if not measured:
        ev.append("the trace does not record memory kinds; judged from the launch call lasting "
                  "as long as the copy")
    ev += [f"launched at {short_site(s)}" for s in top_sites]
    sugg = ("pin the host buffers (DataLoader(pin_memory=True), tensor.pin_memory()) and copy "
            "with .to(device, non_blocking=True), so the copy overlaps compute and the host goes on")
    return [Finding("pageable-h2d", title, sugg, share, ev, top_sites)]


def collectives(a) -> list[Finding]:
    run = a.run
    if run.empty or not run["CommTotalNs"].sum():
        return []
    busy, comm = float(run["BusyNs"].sum()), float(run["CommTotalNs"].sum())
    overlap = float(run["OverlapNs"].sum()) / comm if comm else 0.0
    share = comm / busy if busy else 0.0
    span = float(run["SpanNs"].sum())
    exposed = float(run["CommunicationNs"].sum()) / span if span else 0.0
    n = run["process"].nunique()
    who = f" at {n} ranks" if n > 1 else ""
    ev = [f"collective kernels: {_ms(comm)} of {_ms(busy)} GPU busy time ({_pct(share)})",
          f"{_pct(overlap)} of the communication time overlaps compute kernels",
          f"communication alone (no compute running) fills {_pct(exposed)} of the GPU's time"]
    if exposed < COMM_EXPOSED_MIN:
        return []  # hidden behind compute: collectives cost (almost) nothing
    if share >= COMM_OF_BUSY:
        title = (f"collective kernels take {_pct(share)} of GPU time{who}; only {_pct(overlap)} "
                 "of it overlaps compute")
        sugg = ("raise the work per rank (batch size, gradient accumulation with no_sync()), overlap "
                "communication with the backward pass (DDP bucket_cap_mb, FSDP prefetch), and check "
                "the interconnect (NCCL_DEBUG=INFO names the transport)")
        return [Finding("collectives-dominate", title, sugg, exposed, ev)]
    if overlap < LOW_OVERLAP:
        title = (f"communication does not overlap compute: {_pct(overlap)} of its "
                 f"{_pct(share)} of GPU time{who}")
        sugg = ("let collectives run while compute continues: DDP overlaps gradient all-reduce with "
                "backward by default (check find_unused_parameters, static_graph, bucket sizes); "
                "issue collectives with async_op=True on a side stream")
        return [Finding("low-overlap", title, sugg, exposed, ev)]
    return []


def stragglers(a) -> list[Finding]:
    s = a.stragglers
    if s["process"].nunique() < 2:
        return []
    med = float(s["ComputeNs"].median())
    worst = s.iloc[0]
    rel = worst["ComputeVsMedianPercent"] / 100.0
    if not med or rel < STRAGGLER_MIN:
        return []
    per = "per step" if worst["Steps"] else "over the run"
    title = (f"{worst['process']} is a straggler: it computes {_pct(rel)} longer {per} than the "
             "median process; the others wait for it in their collectives")
    ev = [f"{r.process}: compute {_ms(r.ComputeNs)}, communication {_ms(r.CommunicationNs)} {per}"
          for r in s.head(4).itertuples()]
    sugg = ("balance the work (uneven data shards or sequence lengths?), check that rank's GPU "
            "(clocks, other jobs) and host (data loading)")
    span = float(s["SpanNs"].mean()) or 1.0
    return [Finding("straggler", title, sugg, (worst["ComputeNs"] - med) / span, ev)]


def between_steps(a) -> list[Finding]:
    run = a.run
    if run.empty or a.step_name is None:
        return []
    span = float(run["SpanNs"].sum())
    # Idle after a host wait is the host-wait finding's; the rest is the host's time between steps.
    between = sum(float((g["end"] - g["start"] - g["in_steps"])[g["cause"] != "SyncNs"].sum())
                  for g in a.gaps if len(g))
    share = between / span if span else 0.0
    if share < BETWEEN_STEPS_MIN:
        return []
    title = f"GPU idle {_pct(share)} of the run between steps ('{a.step_name}')"
    ev = [f"{_ms(between)} of {_ms(span)} with no GPU work between one step's last kernel and the "
          "next step's first"]
    sugg = ("look at what runs between steps (data loading, logging, checkpoints, evaluation): "
            "DataLoader(num_workers>0, pin_memory=True, persistent_workers=True), log less often")
    return [Finding("idle-between-steps", title, sugg, share, ev)]


def memory_bound(a) -> list[Finding]:
    tot, unit = _scope(a)
    if tot is None or not tot["SpanNs"]:
        return []
    share = float(tot["MemoryNs"]) / float(tot["SpanNs"])
    if share < MEMORY_MIN:
        return []
    title = f"copies and memsets alone take {_pct(share)} of the GPU's time {unit}"
    ev = [f"{int(tot['Copies'])} copies/sets, {_ms(float(tot['MemoryNs']))} with no kernel running"]
    sugg = ("keep tensors on the GPU between steps, copy once and reuse; overlap the copies that "
            "remain with compute (pinned memory, non_blocking=True, a side stream)")
    return [Finding("memory-copies", title, sugg, share, ev)]


def top_code(a) -> list[Finding]:
    lines = a.lines
    if lines.empty:
        return []
    top = lines.head(3)
    title = "most GPU time is launched from " + ", ".join(
        f"{s} ({p:.0f} %)" for s, p in zip(top["Site"], top["Percent"], strict=True))
    ev = [f"{r.Site} in {r.Function}: {_ms(r.GpuTimeNs)}, {r.Ops} launches, top kernel "
          f"{str(r.TopKernel)[:70]}" for r in top.itertuples()]
    r = a.ranges
    if len(r):
        ev.append("by ROCTx range: " + ", ".join(
            f"{n} ({p:.0f} %)" for n, p in zip(r["Range"].head(3), r["Percent"].head(3), strict=True)))
    sugg = "start optimising at these lines: they launch the kernels that take the GPU's time"
    return [Finding("top-lines", title, sugg, 0.0, ev, list(top["Path"]), level="info")]


def caveats(a) -> list[Finding]:
    out = []
    if a.dropped:
        out.append(Finding("dropped-records", f"{a.dropped} records were dropped while profiling: "
                           "the numbers below undercount",
                           "profile a shorter window (--selected-regions) or trace less", 1.0,
                           level="caveat"))
    if not any(len(p.gpu) for p in a.processes):
        out.append(Finding("no-gpu-work", "no GPU work was recorded: nothing to break down",
                           "run on a GPU host with kernel tracing (rocprof run --kernel-trace or "
                           "--sys-trace)", 1.0, level="caveat"))
        return out
    tot, unit = _scope(a)
    if tot is not None and tot["IdleNs"] and tot["UnknownNs"] >= UNKNOWN_MIN * tot["SpanNs"]:
        out.append(Finding("no-api-calls", f"{_pct(tot['UnknownNs'] / tot['SpanNs'])} of the GPU's "
                           "time is idle for reasons the trace cannot tell: no API calls recorded",
                           "trace the runtime API too (rocprof run --sys-trace or --runtime-trace)",
                           0.5, level="caveat"))
    if a.step_source == "none" and any(len(p.gpu) for p in a.processes):
        out.append(Finding("no-steps", "no step range found: the whole run is analysed as one",
                           "wrap each iteration in roctx.range(\"step\") (or name one with --step)",
                           0.0, level="info"))
    return out


RULES = [caveats, launch_bound, host_waits, pageable_copies, collectives, stragglers,
         between_steps, memory_bound, top_code]
