"""The tables of :class:`rocpd.ranks.RankReport`, built on the client from the small per-database
facts that :mod:`rocpd.ranks` gathers with ``db.map``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from . import text as _text

_UNRANKED = ("record no rank (no RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID or PMIX_RANK in"
             " their environment: a launcher such as the torchrun agent, or not a rank): left out")


NO_GPU_WORK = ("no GPU work recorded: the ranks are compared by step time only (compute and "
               "collective times need kernels: rocprof run records them on a GPU host)")


@dataclass
class RankReport:
    """What :func:`analyze` found; every table is a pandas DataFrame."""

    range_name: str | None
    range_detected: bool
    steps: object
    per_rank: object
    slowest: object
    kernel_skew: object
    processes: object  # every database part: path, guid, rank (None: not a rank), pid, host
    notes: list[str] = field(default_factory=list)

    def matrix(self, metric: str = "duration_ns"):
        """ranks x steps table of ``metric`` (a column of ``steps``), for heat maps."""
        if metric not in ("duration_ns", "compute_ns", "collective_ns", "kernels"):
            raise ValueError("metric must be duration_ns, compute_ns, collective_ns or kernels")
        if self.steps.empty:
            return pd.DataFrame()
        return self.steps.pivot(index="rank", columns="step", values=metric).sort_index()

    @property
    def gpu_work(self) -> bool:
        return NO_GPU_WORK not in self.notes

    @property
    def straggler(self) -> int | None:
        return None if self.slowest.empty else int(self.slowest["rank"].iloc[0])

    def headline(self) -> str:
        return _text.headline(self)

    def format(self, top: int = 10, units: str = "ms", all_ranks: bool = False) -> str:
        return _text.format_report(self, top, units, all_ranks)

    def _repr_html_(self) -> str:
        return _text.html_report(self)


def _ranks_of(identities: list[dict], notes: list[str]) -> dict[str, int]:
    """guid -> rank; parts without one are left out, unless none has one (then path order)."""
    ranked = {i["guid"]: i["rank"] for i in identities if i["rank"] is not None}
    if ranked:
        left = [i["path"] for i in identities if i["rank"] is None]
        if left:
            more = f" and {len(left) - 1} more" if len(left) > 1 else ""
            notes.append(f"{len(left)} database part(s) ({left[0]}{more}) {_UNRANKED}")
        return ranked
    notes.append("no database records a rank; the databases are numbered 0..N-1 in path order")
    return {i["guid"]: n for n, i in enumerate(identities)}


def build(identities, facts, range_name, detected, skip_steps, notes):
    rank_of = _ranks_of(identities, notes)
    procs = pd.DataFrame([{k: i[k] for k in ("path", "guid", "rank", "pid", "host")}
                          for i in identities])
    procs["rank"] = procs["guid"].map(rank_of).astype("Int64")
    by_rank: dict[int, dict] = {}
    for f in facts:
        r = rank_of.get(f["guid"])
        if r is None:
            continue
        acc = by_rank.setdefault(r, {"steps": [], "by_name": {}, "compute": 0, "collective": 0})
        acc["steps"] += list(zip(f["steps"], f["compute"], f["collective"], f["kernels"], strict=True))
        acc["compute"] += f["total_compute"]
        acc["collective"] += f["total_collective"]
        for name, (n, t) in f["by_name"].items():
            c = acc["by_name"].setdefault(name, [0, 0])
            c[0] += n
            c[1] += t
    if by_rank and not any(a["compute"] or a["collective"] for a in by_rank.values()):
        notes.append(NO_GPU_WORK)
    steps = _steps(by_rank, skip_steps)
    per_rank = _per_rank(by_rank, steps, procs)
    return RankReport(range_name, detected, steps, per_rank, _slowest(per_rank, steps),
                      _kernel_skew(by_rank), procs, notes)


def _steps(by_rank, skip_steps: int):
    rows = []
    for r, acc in by_rank.items():
        for n, ((s, e), comp, coll, k) in enumerate(sorted(acc["steps"])):
            if n >= skip_steps:
                rows.append((r, n, s, e, e - s, comp, coll, k))
    cols = ["rank", "step", "start", "end", "duration_ns", "compute_ns", "collective_ns", "kernels"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(["rank", "step"], ignore_index=True).astype("int64")


def _per_rank(by_rank, steps, procs):
    g = steps.groupby("rank")
    med = g[["duration_ns", "compute_ns", "collective_ns"]].median()
    rows = []
    for r in sorted(by_rank):
        acc = by_rank[r]
        who = procs[procs["rank"] == r]
        busy = acc["compute"] + acc["collective"]
        rows.append({
            "rank": r, "host": ",".join(sorted({str(h) for h in who["host"]})),
            "pid": ",".join(str(p) for p in who["pid"]), "databases": who["path"].nunique(),
            "steps": int(g.size().get(r, 0)),
            "step_median_ns": med["duration_ns"].get(r),
            "step_max_ns": g["duration_ns"].max().get(r),
            "compute_per_step_ns": med["compute_ns"].get(r),
            "collective_per_step_ns": med["collective_ns"].get(r),
            "compute_ns": acc["compute"], "collective_ns": acc["collective"],
            "collective_pct": 100.0 * acc["collective"] / busy if busy else 0.0})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for col, out in (("step_median_ns", "step_vs_median_pct"),
                     ("compute_per_step_ns", "compute_vs_median_pct")):
        m = df[col].median()
        df[out] = 100.0 * (df[col] - m) / m if m else 0.0
    return df


def _slowest(per_rank, steps):
    """Every rank, furthest above the median rank first, by the metric that tells a straggler:
    compute per step where steps have kernels (the others wait for the slowest in collectives,
    so their steps last as long), else the step time, else the whole run's compute."""
    cols = ["rank", "metric", "value_ns", "median_ns", "excess_ns", "excess_pct",
            "collective_per_step_ns"]
    if per_rank.empty:
        return pd.DataFrame(columns=cols)
    if len(steps) and steps["kernels"].sum() > 0:
        metric, col = "compute per step", "compute_per_step_ns"
    elif len(steps):
        metric, col = "step time", "step_median_ns"
    else:
        metric, col = "compute (whole run)", "compute_ns"
    v = per_rank[col].astype("float64")
    m = float(v.median())
    df = pd.DataFrame({"rank": per_rank["rank"], "metric": metric, "value_ns": v, "median_ns": m,
                       "excess_ns": v - m, "excess_pct": 100.0 * (v - m) / m if m else 0.0,
                       "collective_per_step_ns": per_rank["collective_per_step_ns"]})
    return df.sort_values(["excess_ns", "rank"], ascending=[False, True], ignore_index=True)


def _kernel_skew(by_rank):
    """Per kernel name: its total time on every rank that runs it; the spread across ranks."""
    per: dict[str, dict[int, tuple[int, int]]] = {}
    for r, acc in by_rank.items():
        for name, (n, t) in acc["by_name"].items():
            per.setdefault(name, {})[r] = (n, t)
    rows = []
    for name, vals in per.items():
        s = pd.Series({r: t for r, (_, t) in vals.items()}, dtype="float64")
        med = float(s.median())
        rows.append({"Name": name, "Ranks": len(s), "Calls": sum(n for n, _ in vals.values()),
                     "MedianNs": med, "MinNs": int(s.min()), "MinRank": int(s.idxmin()),
                     "MaxNs": int(s.max()), "MaxRank": int(s.idxmax()),
                     "MaxOverMedian": float(s.max()) / med if med else float("nan"),
                     "ExcessNs": float(s.max()) - med})
    cols = ["Name", "Ranks", "Calls", "MedianNs", "MinNs", "MinRank", "MaxNs", "MaxRank",
            "MaxOverMedian", "ExcessNs"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(["ExcessNs", "Name"], ascending=[False, True], ignore_index=True)
