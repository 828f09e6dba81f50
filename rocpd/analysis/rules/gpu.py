"""The rules about the GPU's own time: copies from pageable memory, collectives that take the
GPU or go unoverlapped, stragglers among the ranks, copies that take the time, and the lines that
launch the GPU's time."""

from __future__ import annotations

import pandas as pd

from .. import scope
from ..findings import Finding, _ms, _pct
from ..sites import short_site
from ..steps import assign

# Thresholds (fractions of the analysed GPU time unless said otherwise).
PAGEABLE_MIN = 0.01        # pageable H2D copies in the steps: at least this share of the time
BLOCKED_COPY_MIN_NS = 10_000
COMM_OF_BUSY = 0.40        # collectives take this share of the GPU's busy time
LOW_OVERLAP = 0.20         # ... and overlap compute less than this
COMM_EXPOSED_MIN = 0.10    # communication with no compute beside it: this share of the time
STRAGGLER_MIN = 0.10       # a process computes this much longer per step than the median
MEMORY_MIN = 0.25


def pageable_copies(a) -> list[Finding]:
    tot, unit = scope.windows(a)
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

    c = pd.concat(rows, ignore_index=True)
    share = float(c["duration"].sum()) / span if len(c) else 0.0
    if c.empty or share < PAGEABLE_MIN:
        return []
    where = c["site"].dropna()
    top_sites = list(where.value_counts().index[:3])
    loc = f" ({short_site(top_sites[0])})" if top_sites else ""
    where = "inside the step" if unit == "of each step" else "during the run"
    how = "from pageable memory" if measured else "that block the host for their whole duration (as copies from pageable memory do)"
    title = f"{len(c)} host-to-device copies {where} {how}{loc}"
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
    run = scope.steps_part(a)
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


def memory_bound(a) -> list[Finding]:
    tot, unit = scope.windows(a)
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


RULES = (pageable_copies, collectives, stragglers, memory_bound, top_code)
