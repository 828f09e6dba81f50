"""Rules on GPU memory (rocpd.memory, `rocprof run --memory-allocation-trace`): a line whose live
bytes grow step over step (a leak), reserved memory split into holes at the peak
(fragmentation), and a run that ran out of memory. Each reads the analysis' memory tables
(Analysis.memory), none without GPU memory records."""

from __future__ import annotations

from ...memory.text import fmt_bytes
from ..findings import Finding, _pct
from ..sites import short_site

LEAK_SHARE = 0.02   # a leak whose growth over the steps is at least this share of the peak: an issue
FREE_SHARE = 0.25   # reserved - allocated at the peak above this share of reserved ...
SPLIT = 0.50        # ... with the largest free block below this share of it: fragmentation


def leaks(a) -> list[Finding]:
    m = a.memory
    if m is None or not len(m.leaks):
        return []
    peak = {(r.process, r.device): r.PeakAllocatedBytes for r in m.summary.itertuples(index=False)}
    out = []
    for r in m.leaks.itertuples(index=False):
        share = r.TotalGrowthBytes / max(peak.get((r.process, r.device), 0), 1)
        if share < LEAK_SHARE:
            continue
        title = (f"GPU memory grows by {fmt_bytes(r.GrowthBytesPerStep)} per step, allocated at"
                 f" {short_site(r.line)} and never freed")
        ev = [f"{r.process} GPU {r.device}: {fmt_bytes(r.FirstBytes)} live from that line after"
              f" the first step, {fmt_bytes(r.LastBytes)} after the last ({r.Steps} steps; it grew"
              f" in {r.GrewSteps} of them)",
              f"{_pct(share)} of the device's peak allocated ({fmt_bytes(peak.get((r.process, r.device)))})"]
        sugg = ("something keeps each step's tensor alive: a list or dict that collects outputs or"
                " losses (store .item() or .detach().cpu() instead), a tensor kept with its"
                " autograd graph, a cache without a bound; `rocpd memory DB --view leaks` lists"
                " the lines, `--view steps` the growth per step")
        out.append(Finding("memory-leak", title, sugg, min(1.0, share), ev, sites=[r.line]))
    return out[:3]


def fragmentation(a) -> list[Finding]:
    m = a.memory
    if m is None or not len(m.fragmentation):
        return []
    out = []
    for r in m.fragmentation.itertuples(index=False):
        free = r.ReservedMinusAllocatedBytes
        if r.ReservedBytes <= 0 or free / r.ReservedBytes <= FREE_SHARE or \
                r.LargestFreeBlockBytes >= SPLIT * max(r.FreeInSegmentsBytes, 1):
            continue
        share = free / r.ReservedBytes
        title = (f"{_pct(share)} of the reserved GPU memory is free but split into holes at the"
                 f" peak: the largest takes {fmt_bytes(r.LargestFreeBlockBytes)}")
        ev = [f"{r.process} GPU {r.device} at its peak: allocated {fmt_bytes(r.AllocatedBytes)},"
              f" reserved {fmt_bytes(r.ReservedBytes)}, free inside {r.Segments} segments"
              f" {fmt_bytes(r.FreeInSegmentsBytes)}",
              f"threshold: more than {_pct(FREE_SHARE)} of reserved free, the largest free block"
              f" under {_pct(SPLIT)} of it"]
        sugg = ("the caching allocator cannot hand out the holes to a larger request: set "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, allocate long-lived tensors "
                "first, keep tensor sizes steady between steps")
        out.append(Finding("memory-fragmentation", title, sugg, share, ev))
    return out


def out_of_memory(a) -> list[Finding]:
    m = a.memory
    if m is None or not len(m.oom):
        return []
    r = m.oom.iloc[-1]
    top = m.oom_live[m.oom_live["oom"] == r["oom"]].head(3)
    title = (f"the program ran out of GPU memory at {short_site(r['line'])}: a request of"
             f" {fmt_bytes(r['RequestBytes'])} failed")
    ev = [f"{r['process']} GPU {r['device']}: allocated {fmt_bytes(r['AllocatedBytes'])}, reserved"
          f" {fmt_bytes(r['ReservedBytes'])}, the driver had {fmt_bytes(r['DeviceFreeBytes'])} free,"
          f" the largest free block in the segments {fmt_bytes(r['LargestFreeBlockBytes'])}"]
    ev += [f"live then: {fmt_bytes(x.LiveBytes)} from {short_site(x.line)} ({x.Blocks} blocks)"
           for x in top.itertuples(index=False)]
    if len(m.oom) > 1:
        ev.append(f"{len(m.oom)} out-of-memory errors in all")
    frag = r["FreeInSegmentsBytes"] >= r["RequestBytes"] > r["LargestFreeBlockBytes"]
    sugg = ("enough is free inside the allocator's segments but in holes too small: set "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" if frag else
            "the lines above hold the memory: a smaller batch, activation checkpointing, bf16, "
            "freeing what one step keeps for the next")
    return [Finding("out-of-memory", title, sugg + "; `rocpd memory DB` shows the post-mortem",
                    1.0, ev, sites=[str(r["line"])])]


RULES = (out_of_memory, leaks, fragmentation)
