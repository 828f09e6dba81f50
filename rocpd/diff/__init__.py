"""Which line, which kernel, which step phase got slower between two runs.

    d = rocpd.diff("baseline.db", "new.db")       # or folders / globs / lists of rank databases
    d = rocpd.diff(["a1.db", "a2.db", "a3.db"], "new/*.db")   # several runs per side
    print(d.verdict())   # the largest significant regression, or "no significant change"
    d.items              # per line + kernel (and host waits, GPU idle), regressions first
    d.lines, d.kernels, d.phases, d.summary, d.appeared, d.ranks, d.slowest

Both runs are cut into steps (rocpd.analysis.steps: the ROCTx step range, given or detected),
the work of each step is matched by the Python line that launched it and its kernel
(rocpd.diff.names; kernels of another vendor are matched by line), and each change of time per
step gets a bootstrap confidence interval from the step-to-step spread (rocpd.diff.bootstrap):
per step, GPU work is the mean over the steps, GPU idle (the host's pace) a 20 % trimmed mean.
Runs of several ranks: the diff over all ranks, one per rank (``ranks``, the most compute per
step in the new run first), and the new run's slowest rank in full (``slowest``). ``rocpd diff A B`` prints it; ``rocpd report B --baseline A``
and ``rocpd diff A B -o diff.html`` show it with the median steps side by side.

Host-side changes (GPU idle, host waits, step time that GPU work does not explain) are also
judged against the noise between runs (rocpd.diff.runs): measured from several runs per side,
else a floor of half a step. Runs without GPU work are compared by their ROCTx phases and sampled
lines (rocpd.diff.cpu), all of which is the host's.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pandas as pd

from ..analysis.streamed import STREAM_ABOVE
from ..errors import RocpdError
from ..io.connection import Connection
from ..textfmt import records_were
from . import energy, memory, runs
from .bootstrap import Settings
from .load import load
from .result import Diff, compute

__all__ = ["diff", "Diff", "Settings"]


def diff(a, b, step: str | None = None, skip_steps: int = 0, confidence: float = 0.95,
         resamples: int = 2000, seed: int = 0, min_change: float = 0.05, min_share: float = 0.005,
         min_idle: float = 0.05, trim: float = 0.2, run_noise: float | None = None,
         stream_above: int | None = STREAM_ABOVE, **filters) -> Diff:
    """The diff of ``b`` (new) against ``a`` (baseline). ``a``, ``b``: a Connection, a path
    (file, folder, glob) or a list of paths, holding one run or several: the databases of a side
    are split into runs by time (rocpd.diff.runs; a run's ranks overlap, two runs do not), and
    with two or more runs on a side, host-side changes are judged against the runs' spread.
    Runs without GPU work are compared by their ROCTx ranges and sampled lines (rocpd.diff.cpu).
    ``step``: the ROCTx step range of both runs (None: detected in each; "": no steps, each run
    is one step). ``skip_steps``: leave out each process's first N steps (warm-up).
    ``confidence``, ``resamples``, ``seed``: the bootstrap (rocpd.diff.bootstrap);
    ``min_change`` (share of the larger time) and ``min_share`` (share of a baseline step): how
    large a change must be to count; ``min_idle`` (share of a baseline step): how large a change
    that is mostly GPU idle must be (the host's pace moves idle between two runs of one program).
    ``trim``: the share of each run's steps with the most, and with the least, GPU idle that its
    idle per step leaves out (a trimmed mean: the host's rare long pauses are not a change of
    the program; 0: plain means); GPU work is the mean over all steps. ``run_noise`` (share of
    a baseline step): with one run per side, how large a host-side change must be to count
    (None: never for runs with GPU work, whose verdict then rests on GPU work; half a step for
    runs without; rocpd.diff.runs).
    ``stream_above``: a process of more kernel rows than that is read a chunk at a time, not
    held (rocpd.diff.streamed: the same tables; None: held).
    ``filters``: as every rocpd table takes them (rank, pid,
    time window, kernel regex), applied to both runs."""
    settings = Settings(confidence, resamples, seed, min_change, min_share, min_idle, trim,
                        run_noise).check()
    if skip_steps < 0:
        raise RocpdError(f"skip_steps {skip_steps}: give 0 or more")
    sides = []
    for label, x in (("A (baseline)", a), ("B (new)", b)):
        db, opened = _open(x)
        side = None
        try:
            side = load(db, label, step, skip_steps, stream_above, **filters)
        finally:
            if opened and not (side is not None and side.swept):
                db.close()
        if opened and side.swept:
            side.db = db  # open while the diff lives: a swept process's ops are read again
        if not side.procs:
            raise RocpdError(f"{label}: no GPU work, ROCTx range or call-stack sample in"
                             f" {', '.join(side.paths) or x!r}"
                             + (" inside a step" if side.notes else "") + "; a diff compares"
                             " them (record with rocprof run --kernel-trace, mark phases with"
                             " roctx.range(...), sample with rocprof run -S)")
        if not any(len(ps.steps) for ps in side.procs):
            raise RocpdError(f"{label}: --skip-steps {skip_steps} leaves no step (its processes"
                             f" have at most {max(ps.total_steps for ps in side.procs)})")
        sides.append(side)
    base, new = sides
    if base.gpu != new.gpu:
        gpu, cpu = (base, new) if base.gpu else (new, base)
        raise RocpdError(f"{gpu.label} did GPU work and {cpu.label} none: a diff compares like"
                         " with like (both with GPU work, or both by ROCTx ranges and samples)")
    d = compute(base, new, base.procs, new.procs, settings)
    d.energy = energy.compare(base, new, d.settings)
    d.memory = memory.compare(base, new)
    _ranks(d, settings)
    if runs.one_side_first(base.procs, new.procs):
        d.notes.append("every run of one side ran before every run of the other: a drift of the"
                       " machine between them reads as a host-side change; alternate them"
                       " (A, B, A, B, ...) for a host-side verdict")
    for side in sides:
        d.notes += side.notes
        if side.dropped:
            d.notes.append(f"{side.label}: {records_were(side.dropped)} dropped while profiling;"
                           " its figures undercount")
    return d


def _open(x):
    if hasattr(x, "parts"):
        return x, False
    # a list of runs may hold lists (one run's rank databases): the runs are found by time
    paths = [str(p) for p in _flat(x)]
    return Connection(*paths), True


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [p for item in x for p in _flat(item)]
    return [x]


def _rank_pairs(pa, pb):
    """(label, rank, baseline processes, new processes) of the ranks (or processes) in both
    sides, each rank's processes of every run."""
    ra: dict = {}
    rb: dict = {}
    for procs, out in ((pa, ra), (pb, rb)):
        for ps in procs:
            if ps.process.rank is not None:
                out.setdefault(ps.process.rank, []).append(ps)
    if ra and rb:
        return [(f"rank {r}", r, ra[r], rb[r]) for r in sorted(set(ra) & set(rb))]
    runs_a, runs_b = (max((ps.run for ps in p), default=0) + 1 for p in (pa, pb))
    if runs_a == runs_b == 1 and len(pa) == len(pb) > 1:
        return [(f"process {i}", None, [x], [y])
                for i, (x, y) in enumerate(zip(pa, pb, strict=True))]
    return []


def _ranks(d: Diff, settings) -> None:
    """Per-rank diffs and the slowest rank's (runs of more than one process)."""
    pairs = _rank_pairs(d.base.procs, d.new.procs)
    if len(pairs) < 2:
        d.ranks = pd.DataFrame()
        return
    rows, per = [], []
    for label, rank, x, y in pairs:
        sub = compute(d.base, d.new, x, y, settings, scope=label, full=False)
        compute_ns = float(np.mean([v for ps in y for v in ps.measures["ComputeNs"]] or [0.0]))
        per.append((compute_ns, rank if rank is not None else label, (x, y, label)))
        st = sub.summary.iloc[0]
        top = sub.significant.head(1)
        rows.append({"rank": rank if rank is not None else label, "BaseSteps": sub.steps_base,
                     "NewSteps": sub.steps_new,
                     **{c: st[c] for c in ("BaseNs", "NewNs", "DeltaNs", "CiLowNs", "CiHighNs",
                                           "DeltaPercent", "significant")},
                     "NewComputeNs": compute_ns,
                     "top_change": (f"{top.iloc[0]['line']} {top.iloc[0]['kind']} "
                                    f"{top.iloc[0]['name']}: {top.iloc[0]['verdict']}"
                                    if len(top) else "no significant change"),
                     "TopDeltaNs": float(top.iloc[0]["DeltaNs"]) if len(top) else 0.0})
    # The slowest rank of the new run: the most compute per step (in synchronous data
    # parallelism every rank's step lasts as long; the others wait for it in the collectives).
    # The ranks are listed that way too, the slowest first: a table cut at --top keeps it.
    d.ranks = pd.DataFrame(rows).sort_values("NewComputeNs", ascending=False, kind="stable",
                                             ignore_index=True)
    _, d.slowest_rank, (x, y, label) = max(per, key=lambda t: t[0])
    d.slowest = compute(d.base, d.new, x, y, settings, scope=label)


class _CallableModule(types.ModuleType):
    """``rocpd.diff`` is this package and, called, the :func:`diff` function: ``rocpd.diff(a, b)``
    as the API reads, while ``rocpd.diff.Diff`` and the submodules stay importable."""

    def __call__(self, *args, **kwargs) -> Diff:
        return diff(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
