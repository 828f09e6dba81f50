"""Steps: the repeated ROCTx range that a training or inference loop wraps around one iteration.

Chosen by the user (``step="train_step"``: a range whose message is that, or is that followed by
a number, as ``ProfilerStep#12``/``epoch 3``), or detected. Candidates are range names repeated at
least twice whose instances enclose at least half of the process's GPU launches (half of the
ranged time where there is no GPU work). Among them:
1. a name that says it is a step (``step``, ``iteration``, ``batch``: ``STEP_WORDS``), outermost
   and most frequent first (``ProfilerStep#N``, ``train_step``);
2. else the outermost, most frequent one (the issue's rule: the most frequent top-level range),
   except that a name repeated fewer than ``FEW`` times (an epoch) gives way to a name nested in
   it that repeats at least ``DEEPER_FACTOR`` times as often while enclosing about as much.
The coverage test keeps a short range (data loading, logging) that repeats more often than the
step from being taken for it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import RocpdError
from .bounded import step_numbers
from .intervals import measure, union

_NUMBERED = re.compile(r"[\s#:_\-]*\d+$")
STEP_WORDS = re.compile(r"(?i)step|iter|batch")
MIN_COVERAGE = 0.5
FEW = 5
DEEPER_FACTOR = 4
COVERAGE_SLACK = 0.1
MAX_CANDIDATES = 64


def key_of(message: str) -> str:
    """A range's name without a trailing instance number: 'ProfilerStep#7' -> 'ProfilerStep'."""
    k = _NUMBERED.sub("", message).strip()
    return k or message


def launch_times(p) -> np.ndarray:
    """When each GPU op of ``p`` was asked for: its launch call's start, else its own start."""
    return times_of(p.gpu)


def times_of(g) -> np.ndarray:
    """:func:`launch_times` of a frame of GPU ops (a process's, or a chunk of it)."""
    if g.empty:
        return np.zeros(0, dtype=np.int64)
    return g["launch_start"].fillna(g["start"]).to_numpy(dtype=np.int64)


def _instances(ranges, match) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outermost instances among ranges selected by boolean mask ``match``: starts, ends, tids."""
    pos = np.flatnonzero(match)
    s, e, t = (ranges[c].to_numpy(dtype=np.int64)[pos] for c in ("start", "end", "tid"))
    kept = _outermost(s, e, t)
    return s[kept], e[kept], t[kept]


def _outermost(s: np.ndarray, e: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Indices of the outermost of these ranges (by start, then longest first; one inside
    another of the same thread is not), in that order."""
    order = np.lexsort((-e, s))  # stable: equal ranges keep their order
    keep = np.ones(len(order), dtype=bool)
    reach = {}
    for k, i in enumerate(order.tolist()):
        if e[i] <= reach.get(t[i], -1):
            keep[k] = False  # inside an instance of the same name on the same thread
        else:
            reach[t[i]] = e[i]
    return order[keep]


def _inside(times: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Mask of ``times`` lying in any [s, e) (instances may overlap across threads)."""
    if s.size == 0 or times.size == 0:
        return np.zeros(times.size, dtype=bool)

    us, ue = union(s, e)
    i = np.searchsorted(us, times, side="right") - 1
    ok = i >= 0
    out = np.zeros(times.size, dtype=bool)
    out[ok] = times[ok] < ue[i[ok]]
    return out


def candidates(procs) -> list[dict]:
    """Every repeated range name with its count, depth and coverage, over all processes."""
    stats: dict[str, dict] = {}
    for p in procs:
        r = p.ranges
        if r.empty:
            continue
        keys = r["name"].map(key_of)
        span_s, span_e = r["start"].to_numpy(), r["end"].to_numpy()
        counts = keys.value_counts()
        # A step repeats: names seen once are no candidates, and a trace with thousands of
        # distinct names is judged on its most repeated ones.
        found = []
        for k in counts[counts >= 2].index[:MAX_CANDIDATES]:
            m = (keys == k).to_numpy()
            s, e, _ = _instances(r, m)
            st = stats.setdefault(k, {"name": k, "count": 0, "depth": 1 << 30, "covered": 0,
                                      "total": 0})
            st["count"] += len(s)
            st["depth"] = min(st["depth"], int(r["depth"].to_numpy()[m].min()))
            found.append((st, s, e))
        covered, n_ops = _coverage(p, [(s, e) for _, s, e in found])
        for (st, s, e), c in zip(found, covered, strict=True):
            if n_ops:
                st["covered"] += c
                st["total"] += n_ops
            else:  # no GPU work: share of the time any range covers

                st["covered"] += measure(union(s, e))
                st["total"] += measure(union(span_s, span_e))
    out = []
    for st in stats.values():
        st["coverage"] = st["covered"] / st["total"] if st["total"] else 0.0
        out.append(st)
    return sorted(out, key=lambda c: (c["depth"], -c["count"], -c["coverage"]))


def _coverage(p, sets) -> tuple[list[int], int]:
    """How many of ``p``'s GPU ops were launched inside each set of instances (s, e), and how
    many ops there are: from its frame, or a chunk at a time for a streamed process."""
    if not sets:
        return [], 0
    stream = getattr(p, "stream", None)
    chunks = [launch_times(p)] if stream is None else (times_of(f) for f in stream.frames())
    covered, n = [0] * len(sets), 0
    for times in chunks:
        n += times.size
        for j, (s, e) in enumerate(sets):
            covered[j] += int(_inside(times, s, e).sum())
    return covered, n


def choose(procs, step: str | None) -> tuple[str | None, str]:
    """The step range and how it was chosen: ``step`` None detects it ("detected", or "none"
    when nothing repeats), "" turns steps off ("off"), a name is checked ("given")."""
    if step is None:
        name = detect(procs)
        return name, "detected" if name else "none"
    if step and not any(len(steps_of(p, step)) for p in procs):
        raise RocpdError(f"--step {step!r}: no ROCTx range of that name (or that name followed by"
                         " a number); list ranges with `rocpd analyze DB --section ranges`")
    return (step or None), ("given" if step else "off")


def step_name(procs, step: str | None) -> str | None:
    """The step range as :func:`choose` chooses it."""
    return choose(procs, step)[0]


def detect(procs) -> str | None:
    """The step range's name for these processes, or None."""
    return detect_from(candidates(procs))


def detect_from(cands: list[dict]) -> str | None:
    """The choice among :func:`candidates` (dicts of name, count, depth, coverage)."""
    cands = sorted((c for c in cands if c["count"] >= 2 and c["coverage"] >= MIN_COVERAGE),
                   key=lambda c: (c["depth"], -c["count"], -c["coverage"]))
    if not cands:
        return None
    named = [c for c in cands if STEP_WORDS.search(c["name"])]
    if named:
        return named[0]["name"]
    best = cands[0]
    for c in cands[1:]:
        if best["count"] < FEW and c["depth"] > best["depth"] \
                and c["count"] >= DEEPER_FACTOR * best["count"] \
                and c["coverage"] >= best["coverage"] - COVERAGE_SLACK:
            best = c
    return best["name"]


def steps_of(p, name: str):
    """DataFrame of ``p``'s steps (step, start, end, tid, name): the outermost ranges whose
    message is ``name`` or ``name`` followed by a number, by start time."""
    r = p.ranges
    if r.empty or not name:
        return pd.DataFrame(columns=["step", "start", "end", "tid", "name"])
    m = ((r["name"] == name) | (r["name"].map(key_of) == name)).to_numpy()
    pos = np.flatnonzero(m)
    s, e, t = (r[c].to_numpy(dtype=np.int64)[pos] for c in ("start", "end", "tid"))
    kept = _outermost(s, e, t)
    # Ranges recorded twice over the same span on one thread: the name of the last recorded.
    o = np.lexsort((t, e, s))  # stable: equal spans stay in record order
    new = np.ones(len(o), dtype=bool)
    new[1:] = (s[o][1:] != s[o][:-1]) | (e[o][1:] != e[o][:-1]) | (t[o][1:] != t[o][:-1])
    group = np.cumsum(new) - 1
    last = np.empty(len(o), dtype=np.int64)
    if len(o):
        last[o] = o[np.append(np.flatnonzero(new)[1:], len(o)) - 1][group]
    names = r["name"].to_numpy(dtype=object)[pos[last[kept]]]
    # A bounded database (rocprof run --max-size) holds only some steps' ranges: they keep the
    # run's step numbers.
    numbers = step_numbers(p, s[kept])
    return pd.DataFrame({"step": numbers if numbers is not None else np.arange(len(kept)),
                         "start": s[kept], "end": e[kept],
                         "tid": t[kept], "name": names.tolist()})


def assign(p, steps) -> np.ndarray:
    """Step index of each GPU op of ``p`` (by launch time), -1 outside every step."""
    return assign_times(launch_times(p), steps)


def assign_times(times: np.ndarray, steps) -> np.ndarray:
    """Step index of each launch time, -1 outside every step."""
    out = np.full(times.size, -1, dtype=np.int64)
    if steps.empty or times.size == 0:
        return out
    s = steps["start"].to_numpy(dtype=np.int64)
    e = steps["end"].to_numpy(dtype=np.int64)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    i = np.searchsorted(s, times, side="right") - 1
    ok = i >= 0
    hit = np.zeros(times.size, dtype=bool)
    hit[ok] = times[ok] < e[i[ok]]
    out[hit] = order[i[hit]]
    return out
