"""What the host did while the GPU waited for it: the host work that delayed the next launch.

A gap the host caused (charged host late, or idle between steps) has a host window
[``host_from``, ``host_to``) on the launching thread (breakdown.py): from the moment the host
was free to launch (the gap's start, or the return of the wait before it) to its next launch
call. What ran there is named, best evidence first, by
- *samples*: the innermost Python line of the call-stack samples taken on that thread in the
  windows (``rocprof run --sample``);
- *ROCTx ranges*: the ranges on that thread that overlap the windows (a "data" or "log" range),
  the step range and the ranges enclosing whole steps left out;
- *the trace*: the line whose launch ended the wait (launch sites are recorded per kernel) and
  the wait the host had just returned from, when there was one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import intervals as iv
from .sites import short_site
from .steps import key_of

SHOWN_MIN = 0.10  # a line or range is named when it holds at least this share of the windows


@dataclass
class HostWork:
    total_ns: int = 0
    samples: int = 0                                  # samples taken in the windows
    lines: list = field(default_factory=list)         # (site, function, share of samples)
    ranges: list = field(default_factory=list)        # (range name, share of the time)
    resumed: list = field(default_factory=list)       # (site of the launch ending it, share)
    after_wait: float = 0.0                           # share of the time that follows a wait
    waits: list = field(default_factory=list)         # (wait's name, its site or None)

    def cause(self) -> str | None:
        """A few words for a title: what the host was doing, where the trace tells."""
        if self.lines:
            site, fn, _ = self.lines[0]
            return f"the host is in {short_site(site)}" + (f" ({fn})" if fn else "") + " (sampled)"
        if self.ranges:
            return f"the host is inside ROCTx range '{self.ranges[0][0]}'"
        if self.resumed:
            return f"the host works before the launch at {short_site(self.resumed[0][0])}"
        return None

    def sites(self) -> list[str]:
        if self.lines:
            return [s for s, _, _ in self.lines]
        return [s for s, _ in self.resumed]

    def evidence(self) -> list[str]:
        out = []
        if self.lines:
            out.append(f"sampled ({self.samples} samples in it): " + ", ".join(
                f"{short_site(s)}{f' in {fn}' if fn else ''} {100 * sh:.0f} %"
                for s, fn, sh in self.lines))
        if self.ranges:
            out.append("inside ROCTx range " + ", ".join(
                f"'{n}' for {100 * sh:.0f} %" for n, sh in self.ranges) + " of it")
        if self.resumed:
            out.append("the host resumed launching at " + ", ".join(
                f"{short_site(s)} ({100 * sh:.0f} %)" for s, sh in self.resumed))
        if self.after_wait >= SHOWN_MIN and self.waits:
            name, site = self.waits[0]
            where = f" ({short_site(site)})" if isinstance(site, str) and site else ""
            out.append(f"{100 * self.after_wait:.0f} % of it follows a wait ({name}{where}) that "
                       "had drained the GPU: the host work after it could not overlap GPU work")
        if not self.lines and not self.ranges:
            out.append("what the host did is not recorded: sample it (rocprof run --sample) or "
                       "wrap it in roctx.range(...)")
        return out


def _windows(gaps, mask):
    g = gaps[mask]
    s = g["host_from"].to_numpy(dtype=np.int64)
    e = g["host_to"].to_numpy(dtype=np.int64)
    return g, s, e


def summarise(a, select) -> HostWork:
    """The host work in the host windows of the gaps ``select(p, gaps)`` picks (a boolean mask
    over process ``p``'s gap frame), over every process of analysis ``a``."""
    hw = HostWork()
    n_samples = 0
    line_counts: dict = {}
    range_ns: dict = {}
    resumed: dict = {}
    after_ns = 0
    waits: dict = {}
    for p, gaps, blocking in a.gap_pieces():
        if gaps.empty:
            continue
        g, s, e = _windows(gaps, select(p, gaps))
        keep = e > s
        g, s, e = g[keep], s[keep], e[keep]
        if g.empty:
            continue
        length = e - s
        hw.total_ns += int(length.sum())
        for site, ln in zip(g["next_site"].to_numpy(), length, strict=True):
            if isinstance(site, str) and site:
                resumed[site] = resumed.get(site, 0) + int(ln)
        ac = g["after_call"].to_numpy()
        if len(blocking):
            for j, ln in zip(ac, length, strict=True):
                if j >= 0:
                    after_ns += int(ln)
                    b = blocking.iloc[int(j)]
                    site = b["site"] if isinstance(b["site"], str) else b.get("after_site")
                    k = (str(b["name"]), site if isinstance(site, str) else None)
                    waits[k] = waits.get(k, 0) + int(ln)
        tids = g["launch_tid"].to_numpy()
        for tid in np.unique(tids):
            ws, we = iv.union(s[tids == tid], e[tids == tid])
            smp = p.samples
            if smp is not None and len(smp):
                t = smp[smp["tid"] == tid]
                ts = t["timestamp"].to_numpy(dtype=np.int64)
                i = np.searchsorted(ws, ts, side="right") - 1
                inside = (i >= 0) & (ts < we[np.maximum(i, 0)])
                n_samples += int(inside.sum())
                for site, fn in zip(t["site"].to_numpy()[inside], t["function"].to_numpy()[inside],
                                    strict=True):
                    if isinstance(site, str):
                        line_counts[(site, fn)] = line_counts.get((site, fn), 0) + 1
            _ranges_in(a, p, tid, ws, we, range_ns)
    if not hw.total_ns:
        return hw
    hw.samples = n_samples
    if n_samples:
        top = sorted(line_counts.items(), key=lambda kv: -kv[1])[:3]
        hw.lines = [(s, f, c / n_samples) for (s, f), c in top if c / n_samples >= SHOWN_MIN]
    top = sorted(range_ns.items(), key=lambda kv: -kv[1])[:2]
    hw.ranges = [(n, ns / hw.total_ns) for n, ns in top if ns / hw.total_ns >= SHOWN_MIN]
    top = sorted(resumed.items(), key=lambda kv: -kv[1])[:2]
    hw.resumed = [(s, ns / hw.total_ns) for s, ns in top if ns / hw.total_ns >= SHOWN_MIN]
    hw.after_wait = after_ns / hw.total_ns
    hw.waits = [k for k, _ in sorted(waits.items(), key=lambda kv: -kv[1])]
    return hw


def _ranges_in(a, p, tid, ws, we, out: dict) -> None:
    """Time of each ROCTx range name of thread ``tid`` inside windows (ws, we), less the step
    range and the ranges that enclose a whole step (an epoch, a "train" range)."""
    r = p.ranges
    if r.empty:
        return
    r = r[r["tid"] == tid]
    if r.empty:
        return
    names = r["name"].to_numpy(dtype=object)
    keys = np.array([key_of(str(n)) for n in names], dtype=object)
    rs, re_ = r["start"].to_numpy(dtype=np.int64), r["end"].to_numpy(dtype=np.int64)
    keep = np.ones(len(r), dtype=bool)
    if a.step_name:
        keep &= (keys != a.step_name) & (names != a.step_name)
        steps = a._core()[4]
        mine = steps[steps["pid"] == p.pid] if len(steps) else steps
        if len(mine):
            ss, se = mine["start"].to_numpy(dtype=np.int64), mine["end"].to_numpy(dtype=np.int64)
            # a range enclosing a step: some step starts in it and ends in it
            first = np.searchsorted(np.sort(ss), rs, side="left")
            order = np.argsort(ss)
            ss, se = ss[order], se[order]
            ok = first < ss.size
            enc = np.zeros(len(r), dtype=bool)
            enc[ok] = se[np.minimum(first[ok], ss.size - 1)] <= re_[ok]
            keep &= ~enc
    if not keep.any():
        return
    cov = iv.covered((ws, we), rs[keep], re_[keep])
    for n, c in zip(names[keep], cov, strict=True):
        if c > 0:
            out[str(n)] = out.get(str(n), 0) + int(c)
