"""Speed of light (rocprof-compute's "Speed-of-Light" panel, for NVIDIA counters): per kernel and for
the run, FLOP/s by precision (tensor core and not), DRAM and L2 bandwidth, achieved occupancy and
SM throughput, each as value, peak and percent of peak.

Peaks, per GPU:
- *theoretical*: the hardware's own per-cycle peaks that ``--sol`` collects
  (``*.peak_sustained``) times the clock the kernel ran at (``*.cycles_elapsed.avg.per_second``),
  as Nsight Compute derives its roofline; where a database lacks them, the device's properties
  (memory bandwidth, SM count, clock) and the dense per-SM rates of the architecture;
- *empirical*: a short bandwidth and GEMM micro-benchmark run once per device (``rocprof peaks``,
  cached in ``~/.cache/rocprof/peaks.json``; the run's copy is kept in its options), as
  rocprof-compute measures its empirical roofline.

"% of peak" is against the theoretical peak; "% of empirical" against the measured one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rocshared import kernel_metrics as m
from rocshared.peaks import cache_path
from rocshared.units import si

from .pmc import per_dispatch

# Dense rates per SM per clock from the architecture's published peaks, for databases without the
# hardware's own peak counters: (fp32 lanes, fp64 lanes, {precision: tensor FLOP per clock}).
_PER_SM = {
    "8.0": (64, 32, {"tensor_fp16": 2048, "tensor_bf16": 2048, "tensor_tf32": 1024,
                     "tensor_fp64": 128, "tensor_int8": 4096}),
    "9.0": (128, 64, {"tensor_fp16": 4096, "tensor_bf16": 4096, "tensor_tf32": 2048,
                      "tensor_fp8": 8192, "tensor_fp64": 256, "tensor_int8": 8192}),
}


@dataclass
class Row:
    key: str
    label: str
    unit: str


def rows() -> list[Row]:
    """The lines of a speed-of-light table, in order."""
    out = [Row(p.key, f"{p.label}", p.unit) for p in m.PRECISIONS]
    out += [Row("dram", "DRAM bandwidth", "B/s"), Row("l2", "L2 bandwidth", "B/s"),
            Row("occupancy", "Achieved occupancy", "%"), Row("sm", "SM throughput", "%"),
            Row("memory", "Memory throughput", "%"), Row("tensor_active", "Tensor pipe active", "%")]
    return out


_PCT = {"occupancy": m.OCCUPANCY, "sm": m.SM_THROUGHPUT, "memory": m.MEM_THROUGHPUT,
        "tensor_active": m.TENSOR_ACTIVE}


@dataclass
class Peaks:
    """Peaks of one GPU, per second: keys are precision keys, ``dram`` and ``l2``."""

    agent_id: int
    device: str
    theoretical: dict = field(default_factory=dict)
    empirical: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)  # key -> where the theoretical peak came from


@dataclass
class SolResult:
    dispatches: object  # DataFrame: one row per dispatch with the derived columns below
    kernels: object     # DataFrame: one row per (agent, kernel)
    run: object         # DataFrame: the run per agent, long form (agent, key, value, peak, ...)
    peaks: dict         # agent_id -> Peaks


def _col(df, name):
    return df[name].astype("float64") if name in df.columns else pd.Series(float("nan"), index=df.index)


def _present(df, name) -> bool:
    return name in df.columns and df[name].notna().any()


def _derive(df):
    """Per-dispatch seconds, FLOPs per precision, bytes, and theoretical peaks per second."""
    out = df.copy()
    dur = _col(out, m.DURATION) / 1e9
    fallback = out["duration"].astype("float64") / 1e9
    out["seconds"] = dur.where(dur > 0, fallback)
    sm_hz = _col(out, m.SM_CLOCK)
    for p in m.PRECISIONS:
        flops = None
        for group in p.alternatives:
            if any(_present(out, name) for name, _ in group):
                flops = sum(_col(out, name).fillna(0.0) * w for name, w in group)
                break
        out[f"flops_{p.key}"] = flops if flops is not None else np.nan
        peaks = [_col(out, name) for name in p.peak_metrics if _present(out, name)]
        out[f"peak_{p.key}"] = (np.fmax.reduce(peaks) * p.peak_factor * sm_hz) if peaks else np.nan
    out["bytes_dram"] = _col(out, m.DRAM_READ).fillna(0) + _col(out, m.DRAM_WRITE).fillna(0)
    if not (_present(out, m.DRAM_READ) or _present(out, m.DRAM_WRITE)):
        out["bytes_dram"] = np.nan
    out["bytes_l2"] = _col(out, m.L2_BYTES)
    out["peak_dram"] = _col(out, m.DRAM_PEAK) * _col(out, m.DRAM_CLOCK)
    out["peak_l2"] = _col(out, m.L2_PEAK) * _col(out, m.L2_CLOCK)
    flop_cols = [f"flops_{p.key}" for p in m.PRECISIONS if p.unit == "FLOP/s"]
    out["flops_total"] = out[flop_cols].sum(axis=1, min_count=1)
    return out


def _aggregate(df, keys: list[str]):
    """Sums of work over the group, rates = work / time, percentages time-weighted."""
    work = [c for c in df.columns if c.startswith(("flops_", "bytes_"))] + ["seconds"]
    peaks = [c for c in df.columns if c.startswith("peak_")]
    pct = [v for v in _PCT.values() if v in df.columns]
    w = df["seconds"]
    frame = df[keys].copy()
    for c in work:
        frame[c] = df[c]
    for c in peaks + pct:
        frame[c + "__w"] = df[c] * w
        frame[c + "__n"] = w.where(df[c].notna(), 0.0)
    g = frame.groupby(keys, sort=False, dropna=False)
    out = g[work].sum(min_count=1)
    out["dispatches"] = g.size()
    for c in peaks + pct:
        out[c] = g[c + "__w"].sum(min_count=1) / g[c + "__n"].sum()
    out = out.reset_index()
    for p in m.PRECISIONS:
        out[f"rate_{p.key}"] = out[f"flops_{p.key}"] / out["seconds"]
    out["rate_dram"] = out["bytes_dram"] / out["seconds"]
    out["rate_l2"] = out["bytes_l2"] / out["seconds"]
    out["rate_flops_total"] = out["flops_total"] / out["seconds"]
    out["intensity_dram"] = out["flops_total"] / out["bytes_dram"].where(out["bytes_dram"] > 0)
    out["intensity_l2"] = out["flops_total"] / out["bytes_l2"].where(out["bytes_l2"] > 0)
    return pd.DataFrame(out)


def _agents(db) -> dict[int, dict]:
    out = {}
    for f in db.sources():
        for aid, name, uuid, model, agent_json in f.conn.execute(
                "SELECT id, name, uuid, model_name, extdata FROM rocpd_info_agent WHERE type = 'GPU'"):
            try:
                info = json.loads(agent_json or "{}")
            except ValueError:
                info = {}
            out[int(aid)] = {"name": name or f"GPU agent {aid}", "uuid": uuid or "", "model": model or "",
                             "extdata": info if isinstance(info, dict) else {}}
    return out


def _property_peaks(agent: dict) -> tuple[dict, dict]:
    """Theoretical peaks from device properties (a database without peak counters)."""
    ext, peaks, source = agent["extdata"], {}, {}
    bw = ext.get("global_memory_bandwidth_kbps")
    if isinstance(bw, (int, float)) and bw > 0:
        peaks["dram"], source["dram"] = bw * 1000.0, "device property (memory bandwidth)"
    cc = str(ext.get("compute_capability", ""))
    sms, khz = ext.get("multiprocessors"), ext.get("core_clock_khz")
    if cc in _PER_SM and isinstance(sms, int) and isinstance(khz, (int, float)) and khz > 0:
        fp32, fp64, tensor = _PER_SM[cc]
        hz = khz * 1000.0
        what = f"datasheet rate per SM x {sms} SMs x {khz / 1e6:.2f} GHz"
        for key, per_sm in {"fp32": 2 * fp32, "fp64": 2 * fp64, **tensor}.items():
            peaks[key], source[key] = per_sm * sms * hz, what
    return peaks, source


def peak_tables(db, peaks_file: str | None = None) -> list[dict]:
    """The tables of `rocprof peaks` to look a device up in, first first: ``peaks_file`` if
    given, else the run's copy (its options) and the cache of ``rocprof peaks``."""
    if peaks_file:
        with open(peaks_file) as fh:
            return [json.load(fh)]
    tables = []
    for _, tag, value in db.metadata():
        if tag == "rocprof.options":
            try:
                opts = json.loads(value)
            except ValueError:
                continue
            if isinstance(opts, dict) and isinstance(opts.get("empirical_peaks"), dict):
                tables.append(opts["empirical_peaks"])
    try:
        with open(cache_path()) as fh:
            tables.append(json.load(fh))
    except (OSError, ValueError):
        pass
    return tables


def empirical_peaks(db, agents: dict[int, dict], peaks_file: str | None = None) -> dict[int, dict]:
    """Measured peaks per agent: ``peaks_file`` if given, else the run's copy (its options),
    else the cache of ``rocprof peaks``; matched by device UUID, then by device name."""
    out = {}
    tables = peak_tables(db, peaks_file)
    for aid, a in agents.items():
        for table in tables:
            by_uuid = {_uuid_key(k): v for k, v in table.items() if isinstance(v, dict)}
            entry = by_uuid.get(_uuid_key(a["uuid"])) if a["uuid"] else None
            entry = entry or next((v for v in by_uuid.values() if v.get("device") == a["name"]), None)
            if entry:
                found = {"dram": entry.get("dram_bytes_per_second"),
                         "l2": entry.get("l2_bytes_per_second"), **entry.get("flops", {})}
                out[aid] = {k: float(v) for k, v in found.items() if isinstance(v, (int, float))}
                break
    return out


def _uuid_key(uuid: str) -> str:
    """"GPU-5E1F0C3A-..." and "5e1f0c3a..." name the same device."""
    return str(uuid).lower().replace("gpu-", "").replace("-", "")


def compute(db, peaks_file: str | None = None, **filters) -> SolResult:
    """Speed of light of every kernel and of the run (per GPU) from the counters in ``db``."""
    wide = per_dispatch(db, **filters)
    agents = _agents(db)
    empirical = empirical_peaks(db, agents, peaks_file)
    if wide.empty:
        empty = pd.DataFrame()
        return SolResult(wide, empty, empty, {})
    d = _derive(wide)
    kernels = _aggregate(d, ["agent_id", "kernel_name"])
    kernels = kernels.sort_values("seconds", ascending=False, ignore_index=True)
    run_agg = _aggregate(d, ["agent_id"])
    peaks: dict[int, Peaks] = {}
    for aid in run_agg["agent_id"]:
        a = agents.get(int(aid), {"name": f"GPU agent {aid}", "uuid": "", "extdata": {}})
        pk = Peaks(int(aid), a["name"], empirical=empirical.get(int(aid), {}))
        row = run_agg[run_agg["agent_id"] == aid].iloc[0]
        prop, prop_source = _property_peaks(a)
        for r in rows():
            v = row.get(f"peak_{r.key}")
            if v is not None and not _isnan(v):
                pk.theoretical[r.key], pk.source[r.key] = float(v), "hardware counters (peak x clock)"
            elif r.key in prop:
                pk.theoretical[r.key], pk.source[r.key] = prop[r.key], prop_source[r.key]
            elif r.unit == "%":
                pk.theoretical[r.key], pk.source[r.key] = 100.0, "by definition"
        peaks[int(aid)] = pk
    kernels = _fill_peaks(kernels, peaks)
    run = pd.concat([_long(r, peaks[int(r["agent_id"])]) for _, r in run_agg.iterrows()],
                    ignore_index=True)
    return SolResult(d, kernels, run, peaks)


def _fill_peaks(kernels, peaks: dict[int, Peaks]):
    """A kernel without a peak of its own (no peak counters) takes its GPU's."""
    for r in rows():
        col = f"peak_{r.key}"
        if col not in kernels.columns:
            kernels[col] = float("nan")
        fallback = kernels["agent_id"].map(lambda a, k=r.key: peaks[int(a)].theoretical.get(k, math.nan))
        kernels[col] = kernels[col].fillna(fallback)
    return kernels


def _isnan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def value_of(row, key: str) -> float:
    """The achieved value of a SOL line for an aggregated row (rate per second or %)."""
    if key in _PCT:
        v = row.get(_PCT[key])
    else:
        v = row.get(f"rate_{key}")
    return float("nan") if v is None else float(v)


_RUN_COLUMNS = ["agent_id", "device", "key", "metric", "unit", "value", "peak", "pct_of_peak",
                "empirical_peak", "pct_of_empirical", "peak_source", "empirical_note"]


def empirical_note(value: float, peak: float, emp: float, unit: str) -> str:
    """Why a value is above its empirical peak ("" when it is not): never left unexplained."""
    if _isnan(emp) or not emp or _isnan(value) or value <= emp:
        return ""
    ran = f"the kernels ran at {si(value, unit)}"
    if _isnan(peak) or not peak:
        return (f"empirical peak measured below what the kernels reach ({ran}); re-measure with "
                "`rocprof peaks --force`")
    if value <= peak * 1.001:
        return (f"empirical peak measured below the hardware's ({si(emp, unit)} = "
                f"{100 * emp / peak:.0f} % of its {si(peak, unit)}); {ran}, "
                f"{100 * value / peak:.0f} % of the hardware's; re-measure with `rocprof peaks --force`")
    return (f"above the hardware's peak too ({ran}, {100 * value / peak:.0f} % of "
            f"{si(peak, unit)}): the counters count more work than the peak's path does (e.g. "
            "traffic the peak counter leaves out, or a clock that changed during the kernel)")


def _long(row, pk: Peaks):
    recs = []
    for r in rows():
        v = value_of(row, r.key)
        if _isnan(v):
            continue
        peak = pk.theoretical.get(r.key, math.nan)
        emp = pk.empirical.get(r.key, math.nan)
        recs.append({"agent_id": int(row["agent_id"]), "device": pk.device, "key": r.key,
                     "metric": r.label, "unit": r.unit, "value": v, "peak": peak,
                     "pct_of_peak": 100.0 * v / peak if peak and not _isnan(peak) else math.nan,
                     "empirical_peak": emp,
                     "pct_of_empirical": 100.0 * v / emp if emp and not _isnan(emp) else math.nan,
                     "peak_source": pk.source.get(r.key, ""),
                     "empirical_note": empirical_note(v, peak, emp, r.unit)})
    return pd.DataFrame.from_records(recs, columns=_RUN_COLUMNS)


def dominant(row) -> str | None:
    """The precision that did most of a kernel's arithmetic (None: no FLOPs counted)."""
    best, best_v = None, 0.0
    for p in m.PRECISIONS:
        v = row.get(f"flops_{p.key}")
        if v is not None and not _isnan(v) and v > best_v:
            best, best_v = p.key, float(v)
    return best
