"""The result of a diff: DataFrames, per step, regressions first, and the pieces the report's
side-by-side timeline reads (a median step of each run, and which work differs)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import every_step
from .bootstrap import Resampler, Settings
from .names import kernel_key, line_labels
from .tables import Builder, _sites, appeared
from .text import report, verdict


@dataclass
class Diff:
    """``rocpd.diff(a, b)``: how the new run B differs from the baseline A.

    Tables (times are ns per step: GPU work the mean over the steps of each run, GPU idle a
    trimmed mean, ``settings.trim`` of the steps with the most and with the least idle left out
    (rocpd.diff.bootstrap); a multi-process run's steps averaged over its processes first):

    - ``summary``: step time, GPU work and GPU idle per step;
    - ``items``: every piece of work by line, kind and kernel — kernels, collectives, copies,
      host waits ("sync": the GPU idle charged to the wait) and the other GPU idle ("idle",
      charged to the line whose launch ended it);
    - ``lines``, ``kernels``, ``phases``: the same summed per line, per kernel, per phase;
    - ``appeared``: new and vanished kernels, copies and syncs, copies whose memory kind changed,
      work launched more or fewer times per step;
    - ``ranks``: per rank, its step time and its largest change (runs of several ranks);
    - ``slowest``: the diff of the new run's slowest rank against the same rank of the baseline;
    - ``energy``: energy per step (joules: BaseJ, NewJ, DeltaJ ...), when both runs recorded
      energy counter or power samples (rocpd.diff.energy), else None;
    - ``memory``: GPU memory at the peak (peak allocated, reserved, the lines that changed it;
      BaseBytes, NewBytes, DeltaBytes ...), when both runs recorded it (rocpd.diff.memory).

    Each compared row has BaseNs, NewNs, DeltaNs (new - base), CiLowNs/CiHighNs (the bootstrap
    interval of DeltaNs at ``settings.confidence``), DeltaPercent, ``significant`` and ``verdict``;
    ``host``: the change is host-paced and was also judged against the between-run noise
    ``RunNoiseNs`` (rocpd.diff.runs), ``noisy``: it would count but does not clear that noise.
    ``base.runs``, ``new.runs``: how many runs each side holds; ``base.gpu``: False for runs
    without GPU work (rocpd.diff.cpu: ROCTx ranges and sampled lines are the work).
    """

    base: object  # rocpd.diff.side.Side
    new: object
    settings: Settings
    summary: object
    items: object
    lines: object
    kernels: object
    phases: object
    appeared: object
    steps_base: int
    steps_new: int
    scope: str = "all processes"
    ranks: object = None
    slowest: Diff | None = None
    slowest_rank: int | None = None
    notes: list = field(default_factory=list)
    energy: object = None  # rocpd.diff.energy: energy per step, when both runs recorded it
    memory: object = None  # rocpd.diff.memory: GPU memory at the peak, by line, when both recorded it
    _procs: tuple = field(default=((), ()), repr=False)

    # -- what it says -------------------------------------------------------------------------
    @property
    def significant(self):
        """The items whose change is significant, regressions first."""
        return self.items[self.items["significant"].astype(bool)].reset_index(drop=True)

    @property
    def changed(self) -> bool:
        return bool(len(self.significant)) or bool(self.summary["significant"].any())

    def verdict(self, units: str = "us") -> str:
        """One line: the largest significant regression, or "no significant change"."""
        return verdict(self, units)

    def text(self, top: int = 10, units: str = "us") -> str:
        return report(self, top, units)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.text())}</pre>"

    # -- the median step of each run, for the side-by-side timeline -----------------------------
    def median_step(self, which: str) -> dict | None:
        """The step of median length of run ``which`` ("base" or "new"), from the process this
        diff is about (the slowest rank's diff: that rank): {"process", "step", "start", "end",
        "HostNs", "streams", "ops", "waits", "ranges"} with its GPU ops (``differs``: the op's
        work changed significantly, appeared or vanished), host waits and ROCTx ranges, times
        in ns from the step's start."""
        procs = self._procs[0 if which == "base" else 1]
        if not procs:
            return None
        ps = procs[0]
        st = ps.steps
        if st.empty:
            return None
        order = np.argsort(st["HostNs"].to_numpy(), kind="stable")
        row = st.iloc[int(order[(len(order) - 1) // 2])]
        k, t0, t1 = int(row["step"]), int(row["start"]), int(row["end"])
        marked = self._marked(which)
        ops = ps.ops_of(k).copy()
        labels = self._labels(which)
        keys = zip(ops["line"].map(lambda s: labels.get(s, s)), ops["kind2"], ops["key"], strict=True)
        ops["differs"] = [key in marked for key in keys]
        w = ps.waits
        waits = w[w["step"] == k].copy() if w is not None and len(w) else w
        if waits is not None and len(waits):
            keys = zip(waits["line"].map(lambda s: labels.get(s, s)), ["sync"] * len(waits),
                       waits["key"], strict=True)
            waits["differs"] = [key in marked for key in keys]
        r = ps.process.ranges
        ranges = r[(r["end"] > t0) & (r["start"] < t1)] if len(r) else r
        shift = {"start": lambda d: d["start"] - t0, "end": lambda d: d["end"] - t0}
        return {"process": ps.process.label, "step": int(row["orig"]), "HostNs": t1 - t0,
                "streams": ps.process.streams,
                "start": t0, "end": t1, "ops": ops.assign(**shift),
                "waits": waits.assign(**shift) if waits is not None and len(waits) else waits,
                "ranges": ranges.assign(**shift)}

    def _labels(self, which):
        la, lb = line_labels(_sites(self._procs[0]), _sites(self._procs[1]))
        return la if which == "base" else lb

    def _marked(self, which) -> set:
        """Item keys (line, kind, key) of significant changes, as run ``which`` names them."""
        sig = self.significant
        if which == "new":
            sig = sig[sig["status"] != "vanished"]
            keys = set(zip(sig["line"], sig["kind"], sig["key"], strict=True))
            # Paired kernels carry the baseline's key; the new run's ops carry their own.
            return keys | {(a, b, _key_of(n)) for a, b, n in zip(sig["line"], sig["kind"],
                                                                  sig["name_new"], strict=True)}
        sig = sig[sig["status"] != "new"]
        return set(zip(sig["line"], sig["kind"], sig["key"], strict=True))


def _key_of(name):
    return kernel_key(name)


def compute(base, new, pa, pb, settings: Settings, scope: str = "all processes",
            full: bool = True) -> Diff:
    """The diff of processes ``pa`` of run ``base`` against ``pb`` of run ``new``; without
    ``full``, only its summary and items (the per-rank table reads no more)."""
    settings = settings.for_runs(base.gpu)
    b = Builder(pa, pb, lambda na, nb, ia, ib, ra, rb: Resampler(na, nb, settings, ia, ib, ra, rb))
    items = b.items()
    if full:
        tables = (b.lines(items), b.kernels(items), b.phases(items), appeared(items))
    else:
        tables = (pd.DataFrame(),) * 4
    d = Diff(base, new, settings, b.summary(items), items, *tables, b.na, b.nb, scope,
             _procs=(tuple(pa), tuple(pb)))
    if (line := every_step.note(base, new, settings.confidence)) is not None:
        d.notes.append(line)
    for side, n in ((base, b.na), (new, b.nb)):
        if n < 2:
            d.notes.append(f"{side.label}: {n} step(s): no confidence interval (mark a step with "
                           "roctx.range(...) or give --step)")
    return d
