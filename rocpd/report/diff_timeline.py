"""The side-by-side timeline of a diff: the median step of the baseline above the median step of
the new run, both from their step's start (so the same work lines up), drawn by timeline.js with
the work that changed between the runs (significant changes, new work in the new run, vanished
work in the baseline) outlined in red. Same data layout as :mod:`rocpd.report.timeline`, plus
``mark`` (one byte per slice) and ``axis``."""

from __future__ import annotations

import numpy as np

from .timeline import COLORS, _b64, _lanes, _Names, _short_sites

AXIS = "time from the step's start"


def build(d) -> dict | None:
    """Timeline data of ``d`` (a rocpd.diff.Diff; its slowest rank's steps when it has one), or
    None when a run has no step to show."""
    src = d.slowest if d.slowest is not None else d
    views = [("baseline", src.median_step("base")), ("new", src.median_step("new"))]
    if any(v is None for _, v in views):
        return None
    names = _Names()
    groups, tracks, chunks = [], [], []
    end = 0
    for gi, (what, v) in enumerate(views):
        side = src.base if what == "baseline" else src.new
        groups.append({"label": f"{side.label} · {v['process']} · step {v['step']} (median, "
                                f"{v['HostNs'] / 1e6:.3f} ms)", "command": ", ".join(side.paths)[:200]})
        end = max(end, int(v["HostNs"]))
        ops = v["ops"]
        for (gpu, stream), g in (ops.groupby(["gpu", "stream"], sort=True) if len(ops) else []):
            label = f"GPU {gpu} · {v['streams'].get(int(stream), f'stream {stream}')}"
            hints = [f"{s} · {ph}" if s else ph for s, ph in
                     zip(_short_sites(g["site"]), g["phase"], strict=True)]
            _add(chunks, tracks, names, gi, label, "gpu", g["start"], g["end"], list(g["name"]),
                 g["kind"].map(COLORS).to_numpy(), hints, g["differs"].to_numpy(dtype=bool))
            end = max(end, int(g["end"].max()))
        r = v["ranges"]
        for tid, g in (r.groupby("tid", sort=True) if len(r) else []):
            _add(chunks, tracks, names, gi, f"thread {tid} · ROCTx", "ranges", g["start"], g["end"],
                 list(g["name"]), np.full(len(g), COLORS["range"]), None, np.zeros(len(g), bool))
        w = v["waits"]
        if w is not None and len(w):
            for tid, g in w.groupby("tid", sort=True):
                hints = _short_sites(g["line"].where(g["line"] != "(no line)"))
                _add(chunks, tracks, names, gi, f"thread {tid} · waits", "waits", g["start"],
                     g["end"], list(g["name"]), g["blocking"].map(COLORS).fillna(COLORS["sync"])
                     .to_numpy(), hints, g["differs"].to_numpy(dtype=bool))
    cols = list(zip(*chunks, strict=True)) if chunks else [[]] * 8
    track, start, dur, name, color, depth, hint, mark = (
        np.concatenate(c) if len(c) else np.zeros(0) for c in cols)
    return {"t0": 0, "end": int(end), "names": names.list(), "groups": groups, "tracks": tracks,
            "n": int(len(start)), "dropped": 0, "axis": AXIS,
            "track": _b64(np.asarray(track, dtype=np.int32)),
            "start": _b64(np.asarray(start, dtype=np.float64)),
            "dur": _b64(np.asarray(dur, dtype=np.float64)),
            "name": _b64(np.asarray(name, dtype=np.int32)),
            "color": _b64(np.asarray(color, dtype=np.uint8)),
            "depth": _b64(np.asarray(depth, dtype=np.uint8)),
            "hint": _b64(np.asarray(hint, dtype=np.int32)),
            "mark": _b64(np.asarray(mark, dtype=np.uint8)),
            "counters": [], "steps": [], "marked": int(np.asarray(mark, dtype=np.uint8).sum())}


def _add(chunks, tracks, names, group, label, kind, starts, ends, labels, colors, hints, marks):
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    n = s.size
    depth = _lanes(s, np.maximum(e, s + 1)) if n else np.zeros(0, dtype=np.int64)
    tid = len(tracks)
    tracks.append({"label": label, "group": group, "kind": kind,
                   "rows": int(depth.max()) + 1 if n else 1})
    chunks.append((np.full(n, tid, dtype=np.int32), s.astype(np.float64), (e - s).astype(np.float64),
                   names.ids(labels), np.asarray(colors, dtype=np.uint8), depth.astype(np.uint8),
                   names.ids(hints) if hints is not None else np.full(n, -1, dtype=np.int32),
                   np.asarray(marks, dtype=np.uint8)))
