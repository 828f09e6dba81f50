"""Where a run's time goes when it recorded no GPU work: its ROCTx phases and its call-stack
samples, the evidence a CPU-only run has.

- *phases*: per process and ROCTx range name, the time some thread was inside an instance of it
  (instances on several threads counted once), as a share of the process's wall time (its first
  recorded range or sample to its last). ``Kind`` tells the step range ("step") and the ranges
  that enclose whole steps (an epoch, "encloses steps") from the phases of the program.
- *hot lines*: per innermost Python line of the samples (what a thread was running), its
  samples and their share, over every process.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import intervals as iv
from .steps import key_of

LAUNCHER = "<rocprof"  # samples taken while the launcher itself ran: not the program's lines

PHASE_COLS = ["process", "rank", "pid", "Phase", "Kind", "Count", "TimeNs", "WallPercent", "MeanNs",
              "MaxNs", "WallNs"]
LINE_COLS = ["Site", "Function", "Samples", "Percent"]


def has_gpu_work(a) -> bool:
    return any(p.gpu_ops for p in a.processes)


def wall(p) -> tuple[int, int] | None:
    """(first, last) recorded range or sample of process ``p``, or None."""
    firsts, lasts = [], []
    if len(p.ranges):
        firsts.append(int(p.ranges["start"].min()))
        lasts.append(int(p.ranges["end"].max()))
    if p.samples is not None and len(p.samples):
        firsts.append(int(p.samples["timestamp"].min()))
        lasts.append(int(p.samples["timestamp"].max()))
    return (min(firsts), max(lasts)) if firsts else None


def phases(a):
    """The phases table (see the module's text), longest first within each process."""
    steps = a.steps
    rows = []
    for p in a.processes:
        r = p.ranges
        span = wall(p)
        if r.empty or span is None:
            continue
        wall_ns = max(span[1] - span[0], 1)
        mine = steps[steps["pid"] == p.pid] if len(steps) else steps
        ss = mine["start"].to_numpy(dtype=np.int64) if len(mine) else np.zeros(0, np.int64)
        se = mine["end"].to_numpy(dtype=np.int64) if len(mine) else np.zeros(0, np.int64)
        keys = r["name"].map(key_of)
        for name, g in r.groupby(keys, sort=False):
            s, e = g["start"].to_numpy(dtype=np.int64), g["end"].to_numpy(dtype=np.int64)
            time = iv.measure(iv.union(s, e))
            dur = e - s
            kind = "phase"
            if a.step_name and name == a.step_name:
                kind = "step"
            elif ss.size and any(((ss >= a0) & (se <= b0)).any() for a0, b0 in zip(s, e, strict=True)):
                kind = "encloses steps"
            rows.append({"process": p.label, "rank": p.rank, "pid": p.pid, "Phase": name,
                         "Kind": kind, "Count": len(g), "TimeNs": time,
                         "WallPercent": 100.0 * time / wall_ns, "MeanNs": float(dur.mean()),
                         "MaxNs": int(dur.max()), "WallNs": wall_ns})
    if not rows:
        return pd.DataFrame(columns=PHASE_COLS)
    out = pd.DataFrame(rows, columns=PHASE_COLS)
    order = {p.label: i for i, p in enumerate(a.processes)}
    out["_o"] = out["process"].map(order)
    return out.sort_values(["_o", "TimeNs"], ascending=[True, False], kind="stable") \
        .drop(columns="_o").reset_index(drop=True)


def hot_lines(a):
    """Samples per innermost Python line over every process, most first."""
    counts: dict = {}
    n = 0
    for p in a.processes:
        smp = p.samples
        if smp is None or smp.empty:
            continue
        n += len(smp)
        pairs = smp.attrs["lines"]  # (site, function) per line code (analysis.sampled)
        per_code = np.bincount(smp["line"].to_numpy(), minlength=len(pairs))
        for code in np.flatnonzero(per_code).tolist():
            site, fn = pairs[code]
            if isinstance(site, str) and site:
                counts[(site, fn)] = counts.get((site, fn), 0) + int(per_code[code])
    if not counts:
        return pd.DataFrame(columns=LINE_COLS)
    rows = [{"Site": s, "Function": f or "", "Samples": c, "Percent": 100.0 * c / n}
            for (s, f), c in counts.items()]
    return pd.DataFrame(rows, columns=LINE_COLS).sort_values(
        ["Samples", "Site"], ascending=[False, True], kind="stable").reset_index(drop=True)


def program_lines(lines):
    """The hot lines that name a line of the program: not the launcher's own, nor code freed
    before the sampler resolved it (file "?")."""
    return lines[~lines["Site"].str.startswith((LAUNCHER, "?:"))] if len(lines) else lines
