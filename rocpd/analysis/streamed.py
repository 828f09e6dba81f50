"""The analysis of processes too big to hold (``analyze(..., stream_above=N)``: a part with more
than N kernel rows): their ops are swept in time order a chunk at a time (rocpd.analysis.chunks)
instead of held as one frame, and every table that reads the ops is made in that sweep.

One sweep per process, after a first pass for the step windows when there are steps (a step's
window is where its work ran: known only after every op). The breakdown per GPU is sweep.py's,
the gaps go to disk (spill.py) for the waits table and the findings, the tables per name, line
and range are tallies.py's; held processes (small ones, in a mixed analysis) go through the
in-memory breakdown and feed the same tallies whole, so that the tables keep their order.
What stays held: the API calls, the ROCTx ranges and the copies (``p.gpu``), each process's
kernel durations for the medians (8 bytes a kernel), the rows of the tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import attribution
from .activity import blocking_calls
from .breakdown import analyze_process
from .gpuload import text_is
from .spill import SpilledGaps
from .steps import assign_times, steps_of, times_of
from .sweep import GpuSweep, StepWindows
from .tallies import AfterSites, Heads, LaunchTally, LinesTally, RangesTally

# Kernel rows of one process past which the commands sweep it instead of holding it: a held
# million costs ~0.5 GB and 5 CPU s to analyse, a swept one ~0.25 GB (its chunks, 8 bytes a
# kernel for the medians, the interpreter) and 3.5 s (B6, benchmarks/RESULTS.md).
STREAM_ABOVE = 500_000


def run(a, head: int | None = None) -> None:
    """Sweep every process of Analysis ``a`` once: its core tables and the tables that read every
    op go into ``a``'s cache, each streamed process's counts into ``p.facts``; with ``head``, the
    first ``head`` ops of each of its streams into ``p.gpu_head`` (tallies.Heads)."""
    procs = a.processes
    launch, lines, ranges = LaunchTally(a.short_ns), LinesTally(), RangesTally(procs)
    run_rows, per_step, gaps, blocking, steps, parts = [], [], [], [], [], []
    for i, p in enumerate(procs):
        st = steps_of(p, a.step_name) if a.step_name else steps_of(p, "")
        if p.stream is None:
            r, s, g, b, pt = analyze_process(p, st)
            _tally(i, p.gpu, launch, lines, ranges)
        else:
            r, s, g, b, pt = _sweep(p, i, st, launch, lines, ranges, head)
        run_rows += r
        per_step += s
        gaps.append(g)
        blocking.append(b)
        parts += pt
        steps.append(st.assign(process=p.label, rank=p.rank, pid=p.pid))
    a._cache["core"] = (pd.DataFrame(run_rows), pd.DataFrame(per_step), gaps, blocking,
                        pd.concat(steps, ignore_index=True) if steps else pd.DataFrame(),
                        pd.DataFrame(parts))
    # The cached properties' values (functools.cached_property reads the instance's dict).
    a.__dict__["launch_stats"] = launch.stats()
    a.__dict__["launch_summary"] = launch.summary(procs)
    a.__dict__["lines"] = lines.table()
    a.__dict__["ranges"] = attribution.range_gpu_time(procs, inside=ranges.inside,
                                                      total=lines.total)


def _tally(i, chunk, launch, lines, ranges) -> None:
    if len(chunk):
        launch.feed(i, chunk)
        lines.feed(chunk)
        ranges.feed(i, chunk)


def _windows(p, st) -> dict:
    """Each GPU's step windows (agent -> (w0, w1)), from a pass over the launch times."""
    n = len(st)
    if not n:
        return {}
    found: dict = {}
    for chunk in p.stream.frames(label=f"steps of {p.label}"):
        step_of = assign_times(times_of(chunk), st)
        agent = chunk["agent"].to_numpy()
        for ag in np.unique(agent):
            m = agent == ag
            found.setdefault(int(ag), StepWindows(n)).feed(chunk[m], step_of[m])
    return {ag: w.windows() for ag, w in found.items()}


def _sweep(p, i, st, launch, lines, ranges, head=None):
    """analyze_process's (run rows, step rows, gaps, blocking, part rows) for a streamed
    process, the gaps spilled; the tallies fed on the way."""
    n = len(st)
    windows = _windows(p, st)
    blocking = blocking_calls(p)  # its after_site from every op, below, not the copies only
    after = AfterSites(blocking)
    spilled = SpilledGaps()
    sweeps: dict = {}
    facts = {"ops": 0, "first": None, "last": None, "launched_kernels": 0}
    heads = Heads(head) if head else None
    for chunk in p.stream.frames(label=f"analysing {p.label}"):
        _tally(i, chunk, launch, lines, ranges)
        if heads is not None:
            heads.feed(chunk)
        after.feed(chunk)
        _count(facts, chunk)
        agent = chunk["agent"].to_numpy()
        for ag in np.unique(agent).tolist():
            m = agent == ag
            sw = sweeps.get(ag)
            if sw is None:
                zero = np.zeros(n, dtype=np.int64)
                w0, w1 = windows.get(ag, (zero, zero.copy()))
                sw = sweeps[ag] = GpuSweep(p, p.agents.get(ag, (ag, ""))[0], st, w0, w1,
                                           blocking, spilled.sink(ag))
            sw.feed(chunk if m.all() else chunk[m])
    run_rows, step_rows, part_rows = [], [], []
    for ag in sorted(sweeps):
        r, s, pt = sweeps[ag].rows()
        run_rows.append(r)
        step_rows += s
        part_rows += pt
    if heads is not None:
        p.gpu_head, facts["tracks"] = heads.frame(), heads.counts
    p.facts = facts
    return run_rows, step_rows, spilled, after.finish(), part_rows


def _count(facts: dict, chunk) -> None:
    facts["ops"] += len(chunk)
    lo, hi = int(chunk["start"].min()), int(chunk["end"].max())
    facts["first"] = lo if facts["first"] is None else min(facts["first"], lo)
    facts["last"] = hi if facts["last"] is None else max(facts["last"], hi)
    facts["launched_kernels"] += int((chunk["launch_start"].notna().to_numpy()
                                      & ~text_is(chunk["kind"], "memory")).sum())
