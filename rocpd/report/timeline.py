"""The report's timeline data: tracks (per process: each GPU stream, each CPU thread with its ROCTx
ranges and host waits, counter tracks) and their slices, packed as base64 typed arrays for the
canvas renderer in timeline.js. Times are ns relative to the first recorded activity (not the
process start: start-up before the first record is not shown).

A slice budget keeps the page quick to load: GPU work first, then ROCTx ranges, host waits, then
the other API calls; what does not fit is counted and the page says so (the Perfetto trace has
everything).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd

from ..analysis.sites import short_site
from ..textfmt import clip_long
from .counters import counter_tracks

MAX_SLICES = 400_000
# Steps listed in the page's step menu and shaded behind the lanes: the first ones (a run whose
# "step" range has a million instances would otherwise put a million entries into the page).
MAX_STEPS = 5_000
# Colour classes; timeline.js holds the palette in the same order.
COLORS = {"compute": 0, "comm": 1, "memory": 2, "range": 3, "sync": 4, "d2h": 5, "api": 6}


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


class _Names:
    def __init__(self):
        self.index: dict[str, int] = {}

    def ids(self, values) -> np.ndarray:
        codes, uniq = pd.factorize(pd.Series(list(values), dtype=object).map(str), sort=False)
        table = np.empty(len(uniq), dtype=np.int32)
        for k, v in enumerate(uniq):
            j = self.index.get(v)
            if j is None:
                j = self.index[v] = len(self.index)
            table[k] = j
        return table[codes] if len(codes) else np.zeros(0, dtype=np.int32)

    def list(self) -> list[str]:
        return [clip_long(n) for n in self.index]


def _lanes(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Depth of each interval so that none overlaps another on its lane (greedy, by start):
    nested ranges stack, and so do overlapping kernels of one stream (rare, but possible).
    At most 256 lanes; deeper ones share the last."""
    depth = np.zeros(starts.size, dtype=np.int64)
    order = np.argsort(starts, kind="stable")
    s_sorted, e_sorted = starts[order], ends[order]
    if s_sorted.size < 2 or (s_sorted[1:] >= np.maximum.accumulate(e_sorted)[:-1]).all():
        return depth  # nothing overlaps: one lane (the usual stream)
    lane_end: list[int] = []
    for i in order:
        s, e = starts[i], ends[i]
        for d, le in enumerate(lane_end):
            if le <= s:
                lane_end[d] = e
                depth[i] = d
                break
        else:
            depth[i] = min(len(lane_end), 255)
            if len(lane_end) < 256:
                lane_end.append(e)
            else:
                lane_end[255] = max(lane_end[255], e)
    return depth


def build(db, a, max_slices: int = MAX_SLICES) -> dict:
    """The timeline as a JSON-able dict (see timeline.js for how it is read)."""
    procs = a.processes
    t0 = _first_activity(procs)
    names = _Names()
    tracks, groups, chunks = [], [], []
    budget = max_slices
    dropped = 0

    def add_track(label, group, kind, starts, ends, labels, colors, hints=None, total=None):
        nonlocal budget, dropped
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        n = starts.size
        total = n if total is None else total  # a streamed process's track: its first ops only
        if total > budget:
            dropped += total - budget
            keep = np.argsort(starts, kind="stable")[:budget]
            keep.sort()
            starts, ends = starts[keep], ends[keep]
            labels = [labels[i] for i in keep]
            colors = np.asarray(colors)[keep]
            hints = [hints[i] for i in keep] if hints is not None else None
            n = budget
        budget -= n
        depth = _lanes(starts, np.maximum(ends, starts + 1)) if n else np.zeros(0, dtype=np.int64)
        tid = len(tracks)
        tracks.append({"label": label, "group": group, "kind": kind,
                       "rows": int(depth.max()) + 1 if n else 1})
        chunks.append((np.full(n, tid, dtype=np.int32), starts - t0, ends - starts,
                       names.ids(labels), np.asarray(colors, dtype=np.uint8), depth.astype(np.uint8),
                       names.ids(hints) if hints is not None else np.full(n, -1, dtype=np.int32)))
        return tid

    order = []  # (track kind priority, callable)
    for gi, p in enumerate(procs):
        groups.append({"label": f"{p.label} · pid {p.pid}" + (f" · {p.host}" if p.host else "")
                       if p.rank is not None else f"pid {p.pid}" + (f" · {p.host}" if p.host else ""),
                       "command": p.command[:200]})
        for (agent, stream), ops, total in p.gpu_streams():
            idx, gname = p.agents.get(int(agent), (int(agent), ""))
            label = f"GPU {idx} · {p.streams.get(int(stream), f'stream {stream}')}"
            hints = _short_sites(ops["site"])
            order.append((0, gi, label, ops["start"].to_numpy(), ops["end"].to_numpy(),
                          list(ops["name"]), ops["kind"].map(COLORS).to_numpy(), hints, total))
        blocking = a.blocking[gi] if gi < len(a.blocking) else None
        for tid in sorted(set(np.unique(p.ranges["tid"]).tolist())
                          | set(np.unique(p.api["tid"]).tolist())):
            tname = p.threads.get(int(tid), "")
            base = f"thread {tid}" + (f" ({tname})" if tname else "")
            # Only the columns drawn: a thread's million ranges are not copied whole.
            r = p.ranges.loc[(p.ranges["tid"] == tid).to_numpy(), ["start", "end", "name"]]
            if len(r):
                order.append((1, gi, f"{base} · ROCTx", r["start"].to_numpy(), r["end"].to_numpy(),
                              list(r["name"]), np.full(len(r), COLORS["range"]), None, None))
            if blocking is not None and len(blocking):
                w = blocking[blocking["tid"] == tid]
                if len(w):
                    hints = [short_site(s) if isinstance(s, str) else
                             (f"after {short_site(x)}" if isinstance(x, str) else "")
                             for s, x in zip(w["site"], w["after_site"], strict=True)]
                    order.append((2, gi, f"{base} · waits", w["start"].to_numpy(), w["end"].to_numpy(),
                                  list(w["name"]), w["blocking"].map(COLORS).to_numpy(), hints,
                                  None))
            api = p.api[(p.api["tid"] == tid) & (p.api["blocking"] == "")]
            if len(api):
                order.append((3, gi, f"{base} · API", api["start"].to_numpy(), api["end"].to_numpy(),
                              list(api["name"]), np.full(len(api), COLORS["api"]), None, None))
    # Spend the budget by priority, then lay the tracks out by process.
    made = {}
    for item in sorted(order, key=lambda x: x[0]):
        prio, gi, label, s, e, labels, colors, hints, total = item
        made[(gi, prio, label)] = (label, gi, prio, s, e, labels, colors, hints, total)
    for key in sorted(made, key=lambda k: (k[0], k[1], k[2])):
        label, gi, prio, s, e, labels, colors, hints, total = made[key]
        add_track(label, gi, ["gpu", "ranges", "waits", "api"][prio], s, e, labels, colors, hints,
                  total)
    counters = counter_tracks(db, procs, t0)
    for c in counters:
        c["index"] = len(tracks)
        tracks.append({"label": c["label"], "group": c["group"], "kind": "counter", "rows": 2})
    cols = list(zip(*chunks, strict=True)) if chunks else [[]] * 7
    cat = [np.concatenate(c) if len(c) else np.zeros(0) for c in cols]
    track_a, start_a, dur_a, name_a, color_a, depth_a, hint_a = cat
    steps = []
    if len(a.steps):
        gi_of = {p.label: i for i, p in enumerate(procs)}
        ps = a.per_step
        ps = ps[ps["SpanNs"] > 0]
        gpu_win = ps.groupby(["process", "step"]).agg(lo=("start", "min"), hi=("end", "max"))
        for r in a.steps.head(MAX_STEPS).itertuples():
            item = {"label": clip_long(f"{r.process} · {r.name}"), "group": gi_of.get(r.process, 0),
                    "step": int(r.step), "start": int(r.start - t0), "end": int(r.end - t0)}
            if (r.process, r.step) in gpu_win.index:
                lo, hi = gpu_win.loc[(r.process, r.step)]
                item["gpu_start"], item["gpu_end"] = int(lo - t0), int(hi - t0)
            steps.append(item)
    end = int(np.max(start_a + dur_a)) if len(start_a) else 0
    for c in counters:
        if c["t"]:
            end = max(end, max(c["t"]))
    for s in steps:
        end = max(end, s["end"])
    return {
        "t0": int(t0), "end": int(end), "names": names.list(), "groups": groups, "tracks": tracks,
        "n": int(len(start_a)), "dropped": int(dropped),
        "steps_left_out": max(0, len(a.steps) - MAX_STEPS),
        "track": _b64(np.asarray(track_a, dtype=np.int32)),
        "start": _b64(np.asarray(start_a, dtype=np.float64)),
        "dur": _b64(np.asarray(dur_a, dtype=np.float64)),
        "name": _b64(np.asarray(name_a, dtype=np.int32)),
        "color": _b64(np.asarray(color_a, dtype=np.uint8)),
        "depth": _b64(np.asarray(depth_a, dtype=np.uint8)),
        "hint": _b64(np.asarray(hint_a, dtype=np.int32)),
        "counters": counters, "steps": steps,
    }


def _short_sites(sites) -> list[str]:
    table = {s: short_site(s) for s in sites.dropna().unique()}
    return [table.get(s, "") if isinstance(s, str) else "" for s in sites]


def _first_activity(procs) -> int:
    firsts = [p.gpu_span()[0] for p in procs if p.gpu_ops]
    for p in procs:
        for df in (p.ranges, p.api):
            if len(df):
                firsts.append(int(df["start"].min()))
    return min(firsts) if firsts else 0


def to_json(data: dict) -> str:
    # Inside <script type="application/json">: "</" must not close the element.
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
