"""The tables of rocpd.memory from one replay per process (rocpd.memory.replay): timeline, steps,
peak by line, leaks, fragmentation, out-of-memory post-mortem, and the folded stacks of the
flame graph. Every table starts with process, rank, pid, device (the GPU's index)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.sites import BACKWARD, _parse_site

NO_LINE = "(no line)"
HEAD = ["process", "rank", "pid", "device"]
MIN_LEAK_BYTES = 1 << 20   # a line counts as leaking when it grows at least this over the steps
MIN_LEAK_STEPS = 3
SLOPE_POINTS = 1000
LEAK_RULE = ("a leak: a line whose live bytes at the end of each step grow, by the median of "
             "the slopes between every two steps (Theil-Sen: a few odd steps move it little), "
             f"by at least {MIN_LEAK_BYTES >> 20} MiB over {MIN_LEAK_STEPS} or more steps")
KIND_RULE = ("kind: 'backward' for blocks allocated by backward work (the line of its forward "
             "op: gradients and backward temporaries), 'no line' where the allocation had no "
             "Python line, else 'forward/other' (torch's trace does not say parameter, "
             "optimizer state or activation); allocated: before the steps (parameters, "
             "buffers), in an earlier step (kept across steps: optimizer state, gradients, "
             "leaks) or in this step (activations, temporaries)")

COLUMNS = {
    "timeline": [*HEAD, "time", "Seconds", "AllocatedBytes", "ReservedBytes", "DriverBytes"],
    "steps": [*HEAD, "step", "name", "start", "end", "AllocatedStartBytes", "AllocatedEndBytes",
              "GrowthBytes", "PeakAllocatedBytes", "PeakReservedBytes", "PeakDriverBytes"],
    "peak": [*HEAD, "line", "function", "kind", "allocated", "LiveBytes", "Blocks", "SharePercent"],
    "leaks": [*HEAD, "line", "function", "GrowthBytesPerStep", "TotalGrowthBytes", "GrewSteps",
              "Steps", "FirstBytes", "LastBytes"],
    "fragmentation": [*HEAD, "time", "AllocatedBytes", "ReservedBytes", "ReservedMinusAllocatedBytes",
                      "FreeInSegmentsBytes", "LargestFreeBlockBytes", "Segments",
                      "FragmentationPercent", "DriverBytes", "OutsideAllocatorBytes"],
    "oom": [*HEAD, "oom", "time", "line", "function", "RequestBytes", "DeviceFreeBytes",
            "AllocatedBytes", "ReservedBytes", "DriverBytes", "LargestFreeBlockBytes",
            "FreeInSegmentsBytes"],
    "oom_live": [*HEAD, "oom", "line", "function", "kind", "allocated", "LiveBytes", "Blocks",
                 "SharePercent"],
    "summary": [*HEAD, "PeakAllocatedBytes", "PeakAllocatedTime", "PeakReservedBytes",
                "PeakDriverBytes", "AllocatedEndBytes", "ReservedEndBytes", "DriverEndBytes",
                "AllocatorEvents", "DriverEvents", "OOMs"],
}


class Lines:
    """A part's sites as lines: (line, function, kind) and the folded-stack frames."""

    def __init__(self, resolved):
        self.info = []
        self.stacks = []
        for li, frames in resolved:
            site, fn = _parse_site(li)
            kind = "no line" if site is None else ("backward" if site.endswith(BACKWARD)
                                                    else "forward/other")
            self.info.append((site or NO_LINE, fn or "", kind))
            labels = [_frame_label(f) for f in reversed(frames)] or [_frame_label_site(site, fn)]
            self.stacks.append(";".join(labels))


def _frame_label(f: dict) -> str:
    path = str(f.get("file") or "?").rsplit("/", 1)[-1]
    fn = f.get("function") or "?"
    return f"{fn} ({path}:{f.get('line', '?')})".replace(";", ",")


def _frame_label_site(site, fn) -> str:
    if site is None:
        return NO_LINE
    return f"{fn or '?'} ({site.rsplit('/', 1)[-1]})".replace(";", ",")


def robust_slope(y: np.ndarray, x: np.ndarray | None = None) -> float:
    """Growth per step of ``y`` at steps ``x`` (default 0, 1, ...), by Theil-Sen: the median of
    the slopes between every two steps (at most ``SLOPE_POINTS`` of them, evenly chosen). A step
    without the growth, or one with a spike, moves it little; a line growing every other step
    reads its mean rate."""
    n = len(y)
    if n < 2:
        return 0.0
    x = np.arange(n, dtype=float) if x is None else np.asarray(x, dtype=float)
    if n > SLOPE_POINTS:
        pick = np.linspace(0, n - 1, SLOPE_POINTS).round().astype(int)
        x, y = x[pick], y[pick]
    i, j = np.triu_indices(len(x), k=1)
    return float(np.median((y[j] - y[i]) / (x[j] - x[i])))


def frames_of(proc: dict, rep, lines: Lines, steps, step_name) -> dict[str, list[dict]]:
    """The rows of every table for one process (``proc``: process, rank, pid, and ``gpu``:
    agent id -> GPU index), from its finished replays (``rep`` pass 1, ``rep.peaks`` pass 2)."""
    out: dict[str, list[dict]] = {k: [] for k in COLUMNS}
    gpu = proc["gpu"]
    head = {k: proc[k] for k in ("process", "rank", "pid")}
    first = min((d.first for d in rep.devices.values() if d.first is not None), default=0)
    for agent, d in sorted(rep.devices.items(), key=lambda x: gpu[x[0]]):
        h = {**head, "device": gpu[agent]}
        out["summary"].append({**h, "PeakAllocatedBytes": d.peak[0], "PeakAllocatedTime": d.peak[1],
                               "PeakReservedBytes": d.peak_reserved[0],
                               "PeakDriverBytes": d.peak_driver[0], "AllocatedEndBytes": d.allocated,
                               "ReservedEndBytes": d.reserved, "DriverEndBytes": d.driver,
                               "AllocatorEvents": d.events, "DriverEvents": d.real_events,
                               "OOMs": sum(1 for o in rep.ooms if o.agent == agent)})
        out["timeline"] += _timeline(h, d, rep, first)
        out["steps"] += _steps(h, agent, rep, steps)
        out["leaks"] += _leaks(h, agent, rep, lines, steps)
        snap = rep.peaks.get(agent)
        if snap is not None and snap.allocated > 0:
            out["peak"] += _live(h, snap, lines)
            out["fragmentation"].append({**h, **_fragmentation(snap)})
    for i, o in enumerate(rep.ooms):
        h = {**head, "device": gpu[o.agent], "oom": i}
        line, fn, _kind = lines.info[o.site] if o.site is not None else (NO_LINE, "", "")
        out["oom"].append({**h, "time": o.t, "line": line, "function": fn, "RequestBytes": o.request,
                           "DeviceFreeBytes": o.device_free, "AllocatedBytes": o.allocated,
                           "ReservedBytes": o.reserved, "DriverBytes": o.driver,
                           "LargestFreeBlockBytes": o.free["largest"],
                           "FreeInSegmentsBytes": o.free["free"]})
        out["oom_live"] += _live(h, o, lines)
    return out


def _timeline(h, d, rep, first) -> list[dict]:
    if not d.tl:
        return []
    rows, carry = [], None
    for i in range(min(d.tl), max(d.tl) + 1):
        s = d.tl.get(i)
        v = s[:3] if s is not None else carry
        t = rep.t0 + i * rep.width
        rows.append({**h, "time": t, "Seconds": (t - first) / 1e9, "AllocatedBytes": v[0],
                     "ReservedBytes": v[1], "DriverBytes": v[2]})
        if s is not None:
            carry = s[3:]
    return rows


def _steps(h, agent, rep, steps) -> list[dict]:
    if steps is None or not len(steps):
        return []
    rows = []
    for k, name, s, e in zip(steps["step"], steps["name"], steps["start"], steps["end"], strict=True):
        r = rep.step_rows.get(int(k), {}).get(agent)
        if r is None:
            continue
        rows.append({**h, "step": int(k), "name": name, "start": int(s), "end": int(e),
                     "AllocatedStartBytes": r["start"], "AllocatedEndBytes": r["end"],
                     "GrowthBytes": r["end"] - r["start"], "PeakAllocatedBytes": r["peak"],
                     "PeakReservedBytes": r["peak_reserved"], "PeakDriverBytes": r["peak_driver"]})
    return rows


def _leaks(h, agent, rep, lines: Lines, steps) -> list[dict]:
    if steps is None or len(steps) < MIN_LEAK_STEPS:
        return []
    ks = [int(k) for k in steps["step"] if int(k) in rep.step_lines]
    series: dict[tuple, np.ndarray] = {}
    for j, k in enumerate(ks):
        for site, b in rep.step_lines[k].get(agent, {}).items():
            key = lines.info[site][:2]
            if key not in series:
                series[key] = np.zeros(len(ks))
            series[key][j] += b
    rows = []
    x = np.array(ks, dtype=float)
    for (line, fn), y in series.items():
        slope = robust_slope(y, x)
        total = float(y[-1] - y[0])
        if slope <= 0 or total < MIN_LEAK_BYTES or len(y) < MIN_LEAK_STEPS:
            continue
        rows.append({**h, "line": line, "function": fn, "GrowthBytesPerStep": slope,
                     "TotalGrowthBytes": total, "GrewSteps": int((np.diff(y) > 0).sum()),
                     "Steps": len(steps), "FirstBytes": int(y[0]), "LastBytes": int(y[-1])})
    return sorted(rows, key=lambda r: -r["GrowthBytesPerStep"])


def _live(h, snap, lines: Lines) -> list[dict]:
    agg: dict[tuple, list] = {}
    for (site, since), (b, n) in snap.by_site.items():
        a = agg.setdefault((*lines.info[site], since), [0, 0])
        a[0] += b
        a[1] += n
    rows = [{**h, "line": line, "function": fn, "kind": kind, "allocated": since, "LiveBytes": b,
             "Blocks": n,
             "SharePercent": 100.0 * b / snap.allocated if snap.allocated else float("nan")}
            for (line, fn, kind, since), (b, n) in agg.items()]
    return sorted(rows, key=lambda r: -r["LiveBytes"])


def _fragmentation(snap) -> dict:
    f = snap.free
    return {"time": snap.t, "AllocatedBytes": snap.allocated, "ReservedBytes": snap.reserved,
            "ReservedMinusAllocatedBytes": snap.reserved - snap.allocated,
            "FreeInSegmentsBytes": f["free"], "LargestFreeBlockBytes": f["largest"],
            "Segments": f["segments"],
            "FragmentationPercent": 100.0 * (1 - f["largest"] / f["free"]) if f["free"] else 0.0,
            "DriverBytes": snap.driver,
            # held at the driver but not by torch's allocator (NCCL's buffers, other libraries);
            # unknown without the runtime's rows
            "OutsideAllocatorBytes": snap.driver - snap.reserved if snap.driver else None}


def folded(proc: dict, rep, lines: Lines, root: bool) -> dict[str, int]:
    """Live bytes at each device's peak by call stack, ``outer;...;inner`` (the root frame: the
    GPU, and the process with ``root``)."""
    out: dict[str, int] = {}
    for agent, snap in rep.peaks.items():
        top = f"GPU {proc['gpu'][agent]}"
        if root:
            top = f"{proc['process']};{top}"
        for (site, _since), (b, _n) in snap.by_site.items():
            key = f"{top};{lines.stacks[site]}"
            out[key] = out.get(key, 0) + b
    return out


def frame(name: str, rows: list[dict]):
    df = pd.DataFrame(rows, columns=COLUMNS[name])
    for c in df.columns:
        if c.endswith("Bytes") and c not in ("DeviceFreeBytes", "OutsideAllocatorBytes") \
                and not c.endswith("PerStep"):
            df[c] = df[c].astype("int64")
    return df
