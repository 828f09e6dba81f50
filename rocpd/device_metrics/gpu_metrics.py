"""GPU hardware metrics over time (``rocprof run --gpu-metrics``: CUPTI's PM sampling) per step,
per kernel (by time overlap), per ROCTx range and per launch line.

The capture stores each metric of each GPU on a counter track ``"pm_<key> [<gpu>]"`` (category
``cupti_pm_sampling``); a value holds from its time until the track's next value (repeated values
are not stored, and each track ends with its last value again at the end of its last sample).
So a metric over an interval [a, b] is the time-weighted mean of that step function, and the
figure of a group (a kernel name's dispatches, a range name's instances) is the sum of its
intervals' integrals over the sum of their covered time.

Memory stays bounded: each track is streamed from SQLite in time order, a chunk at a time, and
its running integral is read off at the sorted interval ends (a sweep); nothing holds a whole
track. The figures (columns, where the GPU has the metric):

- TensorPercent: the SMs' tensor pipes active (``pm_tensor_active``);
- SmActivePercent, IssuePercent, OccupancyPercent: SMs with a warp, schedulers issuing, warps
  in flight of the slots;
- DramPercent: DRAM read + write throughput, % of the hardware's peak;
- DramGBs: bytes read + written per second (GB/s), and DramPeakPercent: that against the
  empirical peak ``rocprof peaks`` measured (its cache or the run's copy), where there is one;
- L2HitPercent, PciePercent (read + write), NvlinkPercent (rx + tx).

    table(db, processes, by="step", steps=...)   # DataFrame; processes: rocpd.analysis.activity
    whole_run(db) -> DataFrame                   # per GPU over its sampled span
    headline(row) -> "40 % tensor-busy, 30 % DRAM"
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..counters.sol import peak_tables

CATEGORY = "cupti_pm_sampling"
# The samplers whose tracks these are: NVIDIA's (CUPTI PM sampling) and AMD's (rocprofiler-sdk's
# device counting service); both write the same pm_* track names.
CATEGORIES = (CATEGORY, "rocprofiler_sdk_device_counting")
MISSING = ("no GPU hardware metrics in these databases (record them with `rocprof run "
           "--gpu-metrics ...`)")
# Column: (track keys summed, scale). Percent columns sum read + write (or rx + tx).
FIGURES = {
    "TensorPercent": (("pm_tensor_active",), 1.0),
    "SmActivePercent": (("pm_sm_active",), 1.0),
    "IssuePercent": (("pm_sm_issue",), 1.0),
    "OccupancyPercent": (("pm_occupancy",), 1.0),
    "DramPercent": (("pm_dram_read", "pm_dram_write"), 1.0),
    "DramGBs": (("pm_dram_read_bytes", "pm_dram_write_bytes"), 1e-9),
    "L2HitPercent": (("pm_l2_hit_rate",), 1.0),
    "PciePercent": (("pm_pcie_read", "pm_pcie_write"), 1.0),
    "NvlinkPercent": (("pm_nvlink_rx", "pm_nvlink_tx"), 1.0),
}
BY = ("step", "range", "kernel", "line")
NO_LINE = "(no line)"
CHUNK = 200_000  # rows read from SQLite at a time
_TRACK = re.compile(r"^(pm_[a-z0-9_]+) \[(\d+)\]$")
_HEAD = ["process", "rank", "pid", "gpu"]


def tracks(db) -> dict[tuple[str, int], dict[str, int]]:
    """{(guid, gpu ordinal): {metric key: agent id}} of every GPU with PM-sampling tracks (the
    agent: the rocpd_info_agent row of that ordinal, -1 where the database has none). Read
    through db.map, so that a Dask connection answers it too."""
    out: dict[tuple[str, int], dict[str, int]] = {}
    for found in db.map(_tracks_of, label="GPU metrics tracks"):
        for guid, gpu, key, agent in found:
            out.setdefault((guid, gpu), {})[key] = agent
    return out


def _tracks_of(f) -> list[tuple[str, int, str, int]]:
    """(guid, gpu, metric key, agent id) of one database's PM-sampling tracks."""
    agents = {(str(g), int(i)): int(a) for g, a, i in f.conn.execute(
        "SELECT guid, id, absolute_index FROM rocpd_info_agent WHERE type = 'GPU'")}
    out = []
    for guid, name in f.conn.execute(
            "SELECT T.guid, S.string FROM rocpd_track T JOIN rocpd_string S ON S.id ="
            " T.name_id AND S.guid = T.guid WHERE S.string LIKE 'pm!_%' ESCAPE '!' AND EXISTS"
            " (SELECT 1 FROM rocpd_info_pmc I WHERE I.guid = T.guid AND I.component IN (?, ?) AND"
            " S.string = I.name || substr(S.string, length(I.name) + 1) AND"
            " substr(S.string, length(I.name) + 1, 2) = ' [')", CATEGORIES):
        m = _TRACK.match(name or "")
        if m:
            gpu = int(m.group(2))
            out.append((str(guid), gpu, m.group(1), agents.get((str(guid), gpu), -1)))
    return out


def _rows(db, guid: str, track: str):
    """(timestamp, value) arrays of one track in time order, a chunk at a time."""
    for f in db.sources():
        cur = f.conn.execute(
            "SELECT SA.timestamp, PE.value FROM rocpd_sample SA JOIN rocpd_track T ON T.id ="
            " SA.track_id AND T.guid = SA.guid JOIN rocpd_string S ON S.id = T.name_id AND"
            " S.guid = T.guid JOIN rocpd_pmc_event PE ON PE.event_id = SA.event_id AND PE.guid ="
            " SA.guid WHERE S.string = ? AND SA.guid = ? ORDER BY SA.timestamp", (track, guid))
        while True:
            rows = cur.fetchmany(CHUNK)
            if not rows:
                break
            a = np.asarray(rows, dtype=np.float64)
            yield a[:, 0].astype(np.int64), a[:, 1]


def integrals(chunks, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(integral of the step function from its first sample to each x, covered ns up to each x)
    for sorted ``x``: one sweep over ``chunks`` of (t, v). Before the first sample both are 0;
    after the last (the end marker) both stay at their totals."""
    integ = np.zeros(len(x))
    cover = np.zeros(len(x))
    total = 0.0
    first = prev_t = prev_v = None
    done = 0
    for t, v in chunks:
        if prev_t is not None:
            t = np.concatenate([[prev_t], t])
            v = np.concatenate([[prev_v], v])
        if first is None:
            first = int(t[0])
            done = int(np.searchsorted(x, first, side="left"))  # before the first: zeros
        c = total + np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t).astype(np.float64))])
        hi = int(np.searchsorted(x, t[-1], side="right"))
        if hi > done:
            xs = x[done:hi].astype(np.float64)
            integ[done:hi] = np.interp(xs, t.astype(np.float64), c)
            cover[done:hi] = xs - first
        done = hi
        total = float(c[-1])
        prev_t, prev_v = int(t[-1]), float(v[-1])
    if first is not None and done < len(x):
        integ[done:] = total
        cover[done:] = prev_t - first
    return integ, cover


def means(db, guid: str, gpu: int, keys: dict[str, int], starts, ends) -> dict[str, np.ndarray]:
    """Per FIGURES column the GPU has: (integral, covered ns) summed over its tracks, for each
    interval [starts[i], ends[i]] (covered ns: of the first track, the same for all)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    x = np.concatenate([starts, ends])
    order = np.argsort(x, kind="stable")
    xs = x[order]
    out = {}
    for col, (parts, scale) in FIGURES.items():
        have = [k for k in parts if k in keys]
        if not have:
            continue
        integ = np.zeros(len(starts))
        cover = None
        for k in have:
            i_sorted, c_sorted = integrals(_rows(db, guid, f"{k} [{gpu}]"), xs)
            i_x = np.empty_like(i_sorted)
            c_x = np.empty_like(c_sorted)
            i_x[order] = i_sorted
            c_x[order] = c_sorted
            n = len(starts)
            integ += (i_x[n:] - i_x[:n]) * scale
            c = c_x[n:] - c_x[:n]
            cover = c if cover is None else np.minimum(cover, c)
        out[col] = (integ, cover)
    return out


def empirical_dram(db) -> dict[int, float]:
    """The measured DRAM peak (B/s) per GPU ordinal, from the run's copy of `rocprof peaks` or
    its cache, matched by the GPU's name; {} without one."""
    tables = peak_tables(db)
    out = {}
    for f in db.sources():
        for idx, name in f.conn.execute(
                "SELECT absolute_index, name FROM rocpd_info_agent WHERE type = 'GPU'"):
            for table in tables:
                entry = next((v for v in table.values() if isinstance(v, dict)
                              and v.get("device") == name), None)
                bw = entry.get("dram_bytes_per_second") if entry else None
                if isinstance(bw, (int, float)) and bw > 0:
                    out[int(idx)] = float(bw)
                    break
    return out


def _figures(m: dict, sel, peak: float | None) -> dict:
    out = {}
    for col, (integ, cover) in m.items():
        i, c = float(integ[sel].sum()), float(cover[sel].sum())
        out[col] = i / c if c > 0 else float("nan")
    if peak and "DramGBs" in out:
        out["DramPeakPercent"] = 100.0 * out["DramGBs"] * 1e9 / peak
    return out


def columns(by: str, present) -> list[str]:
    key = ["step", "name"] if by == "step" else [by]
    figs = [c for c in FIGURES if c in present]
    if "DramGBs" in present and "DramPeakPercent" in present:
        figs.insert(figs.index("DramGBs") + 1, "DramPeakPercent")
    return [*_HEAD, *key, "Count", "Seconds", *figs]


def table(db, processes, by: str = "step", steps: dict | None = None):
    """The figures per ``by`` of each process's GPUs (see the module's text). ``processes``:
    rocpd.analysis.activity.load(db); ``steps``: {process guid and pid: DataFrame(step, start,
    end, name)} (rocpd.analysis.steps.steps_of), a process without: the whole run one step."""
    if by not in BY:
        raise ValueError(f"by={by!r}: choose one of {', '.join(BY)}")
    found = tracks(db)
    peaks = empirical_dram(db)
    rows, present = [], set()
    for p in processes:
        for (guid, gpu), keys in sorted(found.items()):
            if guid != p.guid:
                continue
            agent = next(iter(keys.values()))
            mine = p.gpu[p.gpu["agent"].astype(int) == agent] if len(p.gpu) else p.gpu
            keyed = _intervals(p, mine, by, (steps or {}).get((p.guid, p.pid)), db, guid, gpu, keys)
            if keyed is None:
                continue
            k, s, e = keyed
            m = means(db, guid, gpu, keys, s, e)
            head = {"process": p.label, "rank": p.rank, "pid": p.pid, "gpu": gpu}
            groups: dict = {}
            for i, name in enumerate(k):
                groups.setdefault(name, []).append(i)
            for name, idx in groups.items():
                sel = np.asarray(idx)
                figs = _figures(m, sel, peaks.get(gpu))
                present.update(figs)
                key = {"step": int(name[0]), "name": name[1]} if by == "step" else {by: name}
                rows.append({**head, **key, "Count": len(sel),
                             "Seconds": float((e[sel] - s[sel]).sum()) / 1e9, **figs})
    out = pd.DataFrame(rows, columns=columns(by, present))
    if by != "step" and len(out):
        out = out.sort_values(["rank", "pid", "gpu", "Seconds"], ascending=[True, True, True, False],
                              kind="stable", ignore_index=True)
    return out


def _intervals(p, mine, by, st, db, guid, gpu, keys):
    """(group keys, starts, ends) of ``by`` for one process and GPU, or None without any."""
    if by == "step":
        if st is None or st.empty:
            lo, hi = span(db, guid, gpu, keys)
            if lo is None:
                return None
            st = pd.DataFrame({"step": [0], "start": [lo], "end": [hi], "name": ["(whole run)"]})
        keys_ = list(zip(st["step"].astype(int), st["name"].astype(str), strict=True))
        return (keys_, st["start"].to_numpy(np.int64), st["end"].to_numpy(np.int64))
    if by == "range":
        r = p.ranges
        if r.empty:
            return None
        return (r["name"].astype(str).tolist(), r["start"].to_numpy(np.int64),
                r["end"].to_numpy(np.int64))
    if mine.empty:
        return None
    names = mine["name"] if by == "kernel" else mine["site"].where(mine["site"].notna(), NO_LINE)
    return (names.astype(str).tolist(), mine["start"].to_numpy(np.int64),
            mine["end"].to_numpy(np.int64))


def span(db, guid: str, gpu: int, keys) -> tuple[int | None, int | None]:
    """First and last sample time of a GPU's first metric track."""
    track = f"{next(iter(keys))} [{gpu}]"
    for f in db.sources():
        lo, hi = f.conn.execute(
            "SELECT MIN(SA.timestamp), MAX(SA.timestamp) FROM rocpd_sample SA JOIN rocpd_track T"
            " ON T.id = SA.track_id AND T.guid = SA.guid JOIN rocpd_string S ON S.id = T.name_id"
            " AND S.guid = T.guid WHERE S.string = ? AND SA.guid = ?", (track, guid)).fetchone()
        if lo is not None:
            return int(lo), int(hi)
    return None, None


def whole_run(db) -> pd.DataFrame:
    """Per GPU: its figures over its whole sampled span."""
    peaks = empirical_dram(db)
    rows = []
    for (guid, gpu), keys in sorted(tracks(db).items()):
        lo, hi = span(db, guid, gpu, keys)
        if lo is None:
            continue
        m = means(db, guid, gpu, keys, [lo], [hi])
        rows.append({"guid": guid, "gpu": gpu, "Seconds": (hi - lo) / 1e9,
                     **_figures(m, np.array([0]), peaks.get(gpu))})
    return pd.DataFrame(rows)


def headline(row) -> str:
    """"40 % tensor-busy, 30 % DRAM" of one row (a dict or Series): what the figures say in
    words, leaving out those the row lacks."""
    parts = []

    def has(c):
        v = row.get(c) if hasattr(row, "get") else None
        return v is not None and v == v

    if has("TensorPercent"):
        parts.append(f"{row['TensorPercent']:.0f} % tensor-busy")
    if has("SmActivePercent"):
        parts.append(f"{row['SmActivePercent']:.0f} % SM-active")
    if has("DramPercent"):
        dram = f"{row['DramPercent']:.0f} % DRAM"
        if has("DramGBs"):
            dram += f" ({row['DramGBs']:.0f} GB/s"
            dram += f", {row['DramPeakPercent']:.0f} % of measured peak)" if has(
                "DramPeakPercent") else ")"
        parts.append(dram)
    return ", ".join(parts)


class Source:
    """A database's PM-sampling tracks, read on demand (what the guided analysis holds)."""

    def __init__(self, db, found):
        self.db = db
        self.tracks = found

    def table(self, processes, by: str = "step", steps: dict | None = None):
        return table(self.db, processes, by, steps)


def source(db) -> Source | None:
    """The tracks of ``db`` as a :class:`Source`, or None when it has none."""
    found = tracks(db)
    return Source(db, found) if found else None


def run_headline(steps_df) -> dict:
    """Per GPU (process, gpu): the time-weighted figures over its steps, and their headline."""
    out = {}
    if steps_df is None or steps_df.empty:
        return out
    figs = [c for c in steps_df.columns if c in FIGURES or c == "DramPeakPercent"]
    for (proc, gpu), g in steps_df.groupby(["process", "gpu"], sort=True):
        w = g["Seconds"].to_numpy(dtype=float)
        row = {}
        for c in figs:
            v = g[c].to_numpy(dtype=float)
            ok = ~np.isnan(v)
            row[c] = float((v[ok] * w[ok]).sum() / w[ok].sum()) if w[ok].sum() > 0 else float("nan")
        out[(proc, gpu)] = {**row, "steps": len(g), "headline": headline(row)}
    return out


def format_summary(db, processes, steps: dict, step: str | None) -> str:
    """`rocpd summary`'s GPU_METRICS part: per GPU one line over its steps ("" without tracks)."""
    if not tracks(db):
        return ""
    df = table(db, processes, "step", steps)
    lines = []
    for (proc, gpu), r in run_headline(df).items():
        what = f"per {step} step ({r['steps']} steps)" if step else "whole run"
        lines.append(f"{proc} GPU {gpu}, {what}: {r['headline']}")
    meta = {k: v for _, k, v in db.metadata() if k.startswith("rocprof.gpu_metrics.")}
    for k in sorted(meta):
        if k.startswith("rocprof.gpu_metrics.achieved_hz."):
            g = k.rsplit(".", 1)[-1]
            lines.append(f"  {g}: sampled at {meta[k]} Hz (asked {meta.get('rocprof.gpu_metrics.hz', '?')}),"
                         f" {meta.get('rocprof.gpu_metrics.overflows.' + g, '0')} overflows, "
                         f"{meta.get('rocprof.gpu_metrics.missing_samples.' + g, '0')} samples missing")
    return "== GPU_METRICS ==\n" + "\n".join(lines) + "\n" if lines else ""
