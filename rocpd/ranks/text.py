"""Text and HTML views of a :class:`rocpd.ranks.RankReport` (``rocpd ranks``, notebooks)."""

from __future__ import annotations

import html

import pandas as pd

from ..textfmt import clip_frame, clip_name, more_rows
from .plots import heatmap_img

EVEN_PCT = 5.0  # below this excess over the median rank, no rank is called the slowest
_UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def _t(ns, units: str = "ms") -> str:
    if ns is None or ns != ns:
        return "-"
    return f"{ns / _UNIT[units]:.3f} {units}"


def headline(rep) -> str:
    """One sentence naming the slowest rank and by how much."""
    if rep.slowest.empty:
        return "no ranks with kernels or steps"
    top = rep.slowest.iloc[0]
    r, metric = int(top["rank"]), top["metric"]
    if len(rep.per_rank) == 1:
        return f"one rank (rank {r}): {metric} {_t(top['value_ns'])}"

    if len(rep.slowest) > 1 and top["excess_pct"] < EVEN_PCT:
        return (f"no rank stands out: the slowest by {metric}, rank {r}, is"
                f" {top['excess_pct']:+.1f} % over the median rank ({_t(top['median_ns'])})")
    text = (f"rank {r} is the slowest by {metric}: {_t(top['value_ns'])}, "
            f"{_t(top['excess_ns'])} ({top['excess_pct']:+.1f} %) over the median rank "
            f"({_t(top['median_ns'])})")
    if metric == "compute per step":
        others = rep.per_rank["collective_per_step_ns"].median()
        text += (f"; it spends {_t(top['collective_per_step_ns'])} per step in collectives, the"
                 f" median rank {_t(others)} (the others wait for it)")
    return text


def _describe(rep) -> str:
    n = len(rep.per_rank)
    dbs = rep.processes["path"].nunique()
    if rep.range_name is None:
        return f"{n} ranks ({dbs} databases); no step range"
    how = "detected: the repeating ROCTx range nested least deep" if rep.range_detected else "given"
    per = rep.per_rank["steps"]
    counts = f"{int(per.min())}" if per.min() == per.max() else f"{int(per.min())}-{int(per.max())}"
    return (f"{n} ranks ({dbs} databases); step range \"{clip_name(rep.range_name)}\" ({how}),"
            f" {counts} steps per rank")


def _ordered(df, units: str, cols: list[str]):
    """``df[cols]`` with times in ``units`` (columns renamed: step_median_ns -> step_median_ms,
    MedianNs -> MedianMs)."""
    out = {}
    for c in cols:
        if c.endswith("_ns"):
            out[c[:-3] + f"_{units}"] = df[c].astype("float64") / _UNIT[units]
        elif c.endswith("Ns"):
            out[c[:-2] + units.capitalize()] = df[c].astype("float64") / _UNIT[units]
        else:
            out[c] = df[c]
    return pd.DataFrame(out)


_PER_RANK = ["rank", "host", "steps", "step_median_ns", "step_vs_median_pct", "compute_per_step_ns",
             "compute_vs_median_pct", "collective_per_step_ns", "compute_ns", "collective_ns",
             "collective_pct"]
_SLOWEST = ["rank", "host", "value_ns", "median_ns", "excess_ns", "excess_pct", "step_median_ns",
            "collective_per_step_ns", "collective_pct"]
_SKEW = ["Name", "Ranks", "MedianNs", "MinNs", "MinRank", "MaxNs", "MaxRank", "MaxOverMedian",
         "ExcessNs"]
_SPREAD = (("step time (median per rank)", "step_median_ns", True),
           ("compute per step", "compute_per_step_ns", True),
           ("collectives per step", "collective_per_step_ns", True),
           ("collective share of kernel time (%)", "collective_pct", False))


def spread(rep):
    """Across ranks: min, median, max (and which rank) of step, compute and collective times."""
    rows = []
    pr = rep.per_rank
    for label, col, is_time in _SPREAD:
        if col != "step_median_ns" and not rep.gpu_work:  # zeros, not measurements
            continue
        v = pr[col].astype("float64")
        if pr.empty or v.isna().all():
            continue
        rows.append({"": label, "min": v.min(), "min_rank": int(pr["rank"][v.idxmin()]),
                     "median": v.median(), "max": v.max(), "max_rank": int(pr["rank"][v.idxmax()]),
                     "_time": is_time})
    return pd.DataFrame(rows)


def sections(rep, top: int = 10, units: str = "ms", all_ranks: bool = False):
    """(title, DataFrame) pairs in reading order; the per-rank table only for few ranks or
    ``all_ranks`` (1,000 rows help nobody on a terminal: --csv writes it)."""
    out = []
    pr = rep.per_rank

    def kept(df):  # without GPU work the compute and collective columns are zeros, not figures
        return df if rep.gpu_work else df[[c for c in df.columns
                                           if not c.startswith(("compute", "collective"))]]

    if not rep.slowest.empty:
        slow = rep.slowest.head(top).merge(pr.drop(columns=["collective_per_step_ns"]), on="rank")
        out.append((f"SLOWEST RANKS by {rep.slowest['metric'].iloc[0]} (top {min(top, len(slow))}"
                    f" of {len(rep.slowest)})", kept(_ordered(slow, units, _SLOWEST))))
    if not pr.empty and (all_ranks or len(pr) <= top):
        out.append(("PER RANK", kept(_ordered(pr, units, _PER_RANK))))
    sp = spread(rep)
    if len(sp):
        for c in ("min", "median", "max"):
            sp[c] = [v / _UNIT[units] if t else v for v, t in zip(sp[c], sp["_time"], strict=True)]
        out.append((f"ACROSS RANKS: compute vs collectives ({units}; share in %)" if rep.gpu_work
                    else f"ACROSS RANKS ({units})",
                    sp.drop(columns=["_time"])))
    if not rep.kernel_skew.empty:
        out.append((f"KERNEL SKEW ACROSS RANKS (total time per rank; top {min(top, len(rep.kernel_skew))}"
                    f" of {len(rep.kernel_skew)} by excess over the median rank)",
                    _ordered(rep.kernel_skew.head(top), units, _SKEW)))
    return out


def format_report(rep, top: int = 10, units: str = "ms", all_ranks: bool = False) -> str:
    lines = [f"Cross-rank view: {_describe(rep)}", headline(rep), ""]
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 250, "display.float_format", "{:.3f}".format):
        for title, df in sections(rep, top, units, all_ranks):
            lines += [f"== {title} ==", clip_frame(df).to_string(index=False)]
            whole = {"SLOWEST": len(rep.slowest), "KERNEL SKEW": len(rep.kernel_skew)}
            left = next((n - len(df) for k, n in whole.items() if title.startswith(k)), 0)
            lines += [more_rows(left)] if left > 0 else []
            lines.append("")
        if len(rep.per_rank) > top and not all_ranks:
            lines += [f"(the table of every rank, {len(rep.per_rank)} rows: use --all-ranks or --all)", ""]
    lines += [f"note: {n}" for n in rep.notes]
    return "\n".join(lines).rstrip() + "\n"


def html_report(rep, top: int = 10, units: str = "ms", plot: bool = True) -> str:
    parts = [f"<p><b>Cross-rank view</b>: {html.escape(_describe(rep))}</p>",
             f"<p><b>{html.escape(headline(rep))}</b></p>"]
    if plot and not rep.steps.empty:
        parts.append(heatmap_img(rep))
    with pd.option_context("display.float_format", "{:.3f}".format):
        for title, df in sections(rep, top, units):
            parts.append(f"<h4>{html.escape(title)}</h4>" + df.to_html(index=False, border=0))
    parts += [f"<p><i>note: {html.escape(n)}</i></p>" for n in rep.notes]
    return "\n".join(parts)
