"""Stable API for the launcher's ``--stats`` and ``-S/--summary`` (and for ``rocpd summary``).

    write_stats_csv(db_path, out_prefix, **filters) -> list[str]
        Writes ``<out_prefix>_<domain>_stats.csv`` for every domain that has rows (kernel_stats,
        memory_copy_stats, memory_allocation_stats, marker_api_stats, hip_api_stats,
        cuda_runtime_api_stats, ..., domain_stats), ``<out_prefix>_device_metrics_stats.csv``
        (min/mean/max per sampled counter and device, ``--process-freq``) and
        ``<out_prefix>_dropped_records.csv`` when the database records drop counts. Returns the
        paths written.
    format_summary(db_path, *, top=CONSOLE_TOP, units="ns", by=None, **filters) -> str
        The same tables as printable text (sampled counters as DEVICE_METRICS), always followed by
        the dropped-record counts. Bounded: at most ``top`` rows per table (per process, rank or
        host with ``by``), then "… and K more (use --all)"; ``top=None`` prints every row.

``db_path`` may be a path, a list of paths/globs/directories, or an open rocpd Connection.
"""

from __future__ import annotations

import csv
import html

import numpy as np
import pandas as pd

from ..analysis.activity import load as load_processes
from ..analysis.steps import detect, steps_of
from ..collectives import text as collectives_text
from ..counters import pmc
from ..device_metrics import gpu_metrics
from ..device_metrics import samples as metrics
from ..errors import RocpdError
from ..io.connection import Connection
from ..io.filters import Filter
from ..io.output_file import open_output
from ..textfmt import (  # noqa: F401 - re-exported: part of rocpd.stats' API
    _TIME_COLS,
    _UNITS,
    NAME_WIDTH,
    SAMPLES_MISSED_ADVICE,
    TEXT_WIDTH,
    TOP_ROWS,
    clip_frame,
    clip_long,
    clip_name,
    more_rows,
    samples_missed,
    scale,
)
from . import core as _summary
from . import samples
from .sql import local, region_tables
from .stats_files import format_percentage, format_stat, write_stats_frame  # noqa: F401 - rocpd.stats' API

# What --domain may name besides the region tables a database holds: the timed tables, each API
# family our capture records, and the tables that are not durations.
DOMAINS = ("kernel", "memory_copy", "memory_allocation", "scratch_memory", "hip_api", "hsa_api",
           "marker_api", "cuda_runtime_api", "cuda_driver_api", "cuda_synchronization", "rccl_api",
           "domain", "device_metrics", "gpu_metrics", "samples", "counter_collection", "collectives")

# Console tables show this many rows of each table (of each group with ``by``) unless told
# otherwise: a program with a million distinct ROCTx messages printed 85 MB.
CONSOLE_TOP = TOP_ROWS


def stem_for(category: str) -> str:
    """rocprofv3's file stem for a category (HIP_RUNTIME_API -> hip_api, MARKER_CORE_API -> marker_api)."""
    c = category.upper()
    if c.startswith("HIP_") and c.endswith(("_API", "_API_EXT")):
        return "hip_api"
    if c.startswith("HSA_") and c.endswith(("_API", "_API_EXT")):
        return "hsa_api"
    if c.startswith("MARKER_") or c.startswith("ROCTX"):
        return "marker_api"
    return {"KERNEL_DISPATCH": "kernel", "MEMORY_COPY": "memory_copy",
            "MEMORY_ALLOCATION": "memory_allocation", "SCRATCH_MEMORY": "scratch_memory"}.get(
        c, c.lower())


def domain_stems(domains: list[str], present) -> list[str]:
    """``domains`` (table stems or ROCm's category names, any case: KERNEL_DISPATCH -> kernel) as
    table stems; a name that is neither a known domain nor a table of these databases
    (``present``) is a RocpdError that names the valid ones."""
    import difflib

    valid = list(dict.fromkeys([*DOMAINS, *present]))
    stems = [stem_for(d) for d in domains]
    for given, stem in zip(domains, stems, strict=True):
        if stem not in valid:
            near = difflib.get_close_matches(stem, valid, n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            raise RocpdError(f"--domain {given}: no such table; {hint}(domains: {', '.join(valid)})")
    return stems


def _open(db):
    if hasattr(db, "parts"):
        return db, False
    paths = db if isinstance(db, (list, tuple)) else [db]
    return Connection(*paths), True


def collect(db, by: str | None = None, top: int | None = None, **filters) -> dict[str, object]:
    """{stem: DataFrame} for every domain with rows, in a fixed order, plus 'domain'. ``top``:
    at most that many rows per table (per group with ``by``); each table's attrs["rows"] is its
    number of rows in full."""
    with _summary.cached():
        return _collect(db, by, top, **filters)


def cut(df, top: int | None, by: str | None = None):
    """``df``'s first ``top`` rows (of each ``by`` group), with attrs["rows"] = len(df)."""
    rows = df.attrs.get("rows", len(df))
    if top is not None and len(df) > top:
        df = df.groupby(by, dropna=False, sort=False).head(top) if by else df.head(top)
        df = df.reset_index(drop=True)
    df.attrs["rows"] = rows
    return df


def more_line(df, top: int | None, how: str = "--all") -> str:
    """"… and K more (use --all)" where ``df`` (cut by :func:`cut`) leaves rows out, else "";
    ``how``: the command that shows them, where --all is not an option of the reader's."""
    left = df.attrs.get("rows", len(df)) - len(df)
    return more_rows(left, how) + "\n" if top is not None and left > 0 else ""


class Summary(dict):
    """{stem: DataFrame} as :func:`collect` returns, that prints as ``rocpd summary`` does and
    shows as HTML tables in Jupyter."""

    def __init__(self, tables: dict, drops: str, top: int | None = None, units: str = "ns",
                 samples: str = "", by: str | None = None):
        super().__init__(tables)
        self.drops, self.top, self.units = drops, top, units
        self.samples, self.by = samples, by

    def __str__(self) -> str:
        parts = [format_table(f"== {stem.upper()}_STATS ==", df, self.units, self.top, self.by)
                 for stem, df in self.items()]
        if not self:
            parts.append("No timed records in this database.\n")
        if self.samples:
            parts.append(self.samples)
        return "\n".join([*parts, self.drops])

    def _repr_html_(self) -> str:
        return summary_html(self)


def summary_html(summary) -> str:
    """A summary's tables as HTML (Jupyter), built from the finished tables."""
    parts = []
    for stem, df in summary.items():
        shown = scale(df, summary.units)
        if summary.top is not None:
            shown = shown.head(summary.top)
        more = f" (top {summary.top} of {len(df)})" if summary.top and len(df) > summary.top else ""
        parts.append(f"<h4>{html.escape(stem)} stats{more}</h4>"
                     + clip_frame(shown).to_html(index=False, border=0, float_format="{:.3f}".format))
    if not summary:
        parts.append("<p>No timed records in these databases.</p>")
    parts.append(f"<p><i>{html.escape(summary.drops.strip().replace(chr(10), '; '))}</i></p>")
    return "\n".join(parts)


def summarize(db, top: int | None = None, units: str = "ns", by: str | None = None,
              **filters) -> Summary:
    """Every domain's whole table (:func:`collect`) and the dropped-record counts, as one object
    that shows ``top`` rows of each table (per group with ``by``)."""
    db_, owned = _open(db)
    try:
        return Summary(collect(db_, by=by, **filters), format_drops(db_), top, units,
                       samples=samples.format_summary(db_, top=top or TOP_ROWS, cut=top is not None),
                       by=by)
    finally:
        if owned:
            db_.close()


def _collect(db, by: str | None = None, top: int | None = None, **filters) -> dict[str, object]:
    out = {}
    # Scratch operations (rows of rocpd_memory_allocate) in both allocation tables, as ROCm's
    # summary counts them.
    for kind, stem in (("kernel", "kernel"), ("memory_copy", "memory_copy"),
                       ("memory_allocation", "memory_allocation"),
                       ("scratch_memory", "scratch_memory")):
        df = _summary.stats(db, kind, by=by, **filters)
        if len(df):
            out[stem] = cut(df, top, by)
    if local(db):  # names without bound (ROCTx messages): combined in SQLite, top rows read
        stems: dict[str, list] = {}
        for c in _summary.region_categories(db):
            stems.setdefault(stem_for(c), []).append(c)
        tabs = region_tables(db, Filter.of(filters), by, top, dict(sorted(stems.items())))
        out.update((stem, df) for stem, df in tabs.items() if len(df))
    else:
        regions = _summary.stats(db, "region", by=by, **filters)
        if len(regions):
            regions = regions.assign(_stem=regions["category"].fillna("UNKNOWN").map(stem_for))
            for stem in sorted(regions["_stem"].unique()):
                part = regions[regions["_stem"] == stem].drop(columns=["_stem", "category"])
                out[stem] = cut(_summary.finish_percent(part, by), top, by)
    dom = _summary.domain_stats(db, **filters)
    if len(dom):
        out["domain"] = cut(dom, top)
    return out


# rocprofiler-sdk source/lib/output/domain_type.cpp: the domain_stats.csv names (column_name).
def domain_name(category: str) -> str:
    """rocprofv3's domain_stats name for a category (MARKER_CORE_API -> MARKER_API)."""
    stem = stem_for(category)
    return {"hip_api": "HIP_API", "hsa_api": "HSA_API", "marker_api": "MARKER_API"}.get(
        stem, "RCCL_API" if category.upper().startswith("RCCL") else category)


def rocprofv3_domains(df):
    """``df`` (a domain_stats table) with categories renamed and merged into rocprofv3's domains."""
    if not len(df) or "Name" not in df.columns:
        return df
    df = df.assign(Name=df["Name"].map(lambda v: domain_name(v) if isinstance(v, str) else v))
    if not df["Name"].duplicated().any():
        return df
    rows = []
    for name, g in df.groupby("Name", sort=False):
        n = g["Calls"].astype(float)
        mean = g["AverageNs"].astype(float)
        var = g["StdDev"].fillna(0).astype(float) ** 2
        calls = int(n.sum())
        total = g["TotalDurationNs"].sum()
        avg = float(total) / calls
        ss = ((n - 1).clip(lower=0) * var + n * mean ** 2).sum() - calls * avg ** 2
        std = float(np.sqrt(abs(ss) / (calls - 1))) if calls > 1 else 0.0
        rows.append({"Name": name, "Calls": calls, "TotalDurationNs": total, "AverageNs": avg,
                     "Percentage": 0.0, "MinNs": g["MinNs"].min(), "MaxNs": g["MaxNs"].max(),
                     "StdDev": std})
    out = pd.DataFrame(rows, columns=df.columns)
    out["Percentage"] = 100.0 * out["TotalDurationNs"] / out["TotalDurationNs"].sum()
    return out.sort_values("TotalDurationNs", ascending=False, kind="stable").reset_index(drop=True)


def write_stats_csv(db_path, out_prefix: str, **filters) -> list[str]:
    db, owned = _open(db_path)
    try:
        written = []
        for stem, df in collect(db, **filters).items():
            path = f"{out_prefix}_{stem}_stats.csv"
            if stem == "domain":
                df = rocprofv3_domains(df)
            write_stats_frame(df, path)
            written.append(path)
        dev = metrics.summary(db, **filters)
        if len(dev):  # sampled counters (--process-freq): min/mean/max, not durations
            path = f"{out_prefix}_device_metrics_stats.csv"
            with open_output(path, newline="") as fh:
                dev.to_csv(fh, index=False)
            written.append(path)
        drops = db.dropped_records()
        if drops:
            path = f"{out_prefix}_dropped_records.csv"
            with open_output(path, newline="") as fh:
                w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
                w.writerow(["Tag", "Count"])
                w.writerows(sorted(drops.items()))
            written.append(path)
        return written
    finally:
        if owned:
            db.close()


def format_table(title: str, df, units: str = "ns", top: int | None = None,
                 by: str | None = None, how: str = "--all") -> str:
    """``df`` as console text: at most ``top`` rows (of each ``by`` group), long names clipped,
    then "… and K more (use --all)" when rows are left out."""
    df = cut(df, top, by)
    shown = clip_frame(scale(df, units))
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 250, "display.max_colwidth", 80,
                           "display.float_format", "{:.3f}".format):
        body = shown.to_string(index=False)
    return f"{title}\n{body}\n{more_line(df, top, how)}"


def format_drops(db) -> str:
    drops = db.dropped_records()
    if not drops:
        return "Dropped records: not recorded by this database\n"
    total = db.dropped_total()
    # The causes that lost something (the total row is the head's number): a list of zeros
    # says nothing the head does not.
    lines = [f"  {k}: {v}" for k, v in sorted(drops.items())
             if v and (k != "rocprof.dropped_records" or len(drops) == 1)]
    missed, taken = samples.missed_and_taken(db)
    if total == 0:
        head = "Dropped records: none"
    elif total == missed:  # missed timer ticks only: no trace record is lost
        head = f"Dropped records: {total}, all of them call-stack samples"
    else:
        head = f"Dropped records: {total} LOST"
    if missed:  # the findings' words (rules.caveats), so that both say the same
        lines.append(f"  {samples_missed(missed, taken)[0]}: {SAMPLES_MISSED_ADVICE}")
    return "\n".join([head, *lines]) + "\n"


def _gpu_metrics(db, **filters) -> str:
    """Per GPU its hardware metrics over its steps (rocpd.device_metrics.gpu_metrics), "" without."""
    if not gpu_metrics.tracks(db):
        return ""
    if getattr(db, "client", None) is not None:  # a Dask connection: the figures read each track
        return ("GPU metrics: recorded; their per-step figures are read in this process"
                " (rocpd gpumetrics DB, without --dask)\n")
    procs = load_processes(db, **filters)
    name = detect(procs)
    steps = {(p.guid, p.pid): steps_of(p, name) for p in procs} if name else {}
    return gpu_metrics.format_summary(db, procs, steps, name)


def format_summary(db_path, *, top: int | None = CONSOLE_TOP, units: str = "ns",
                   by: str | None = None, domains: list[str] | None = None, how: str = "--all",
                   sample_funcs: int | None = None, **filters) -> str:
    """The summary's text (see the module's text); ``how``: what a cut table names to show the
    rest (``rocprof run -S`` names a rocpd command); ``sample_funcs``: rows of the samples'
    functions table (default ``top``)."""
    db, owned = _open(db_path)
    try:
        tables = collect(db, by=by, top=top, **filters)
        if domains is not None:
            domains = domain_stems(domains, tables)
        parts = []
        for stem, df in tables.items():
            if domains is None or stem in domains:
                parts.append(format_table(f"== {stem.upper()}_STATS ==", df, units, top, by, how))
        if not tables:
            parts.append("No timed records in this database.\n")
        if domains is None or "device_metrics" in domains:
            table = metrics.format_summary(db, top=top, **filters)
            if table:
                parts.append(table)
        if domains is None or "gpu_metrics" in domains:
            table = _gpu_metrics(db, **filters)
            if table:  # GPU hardware metrics over time (--gpu-metrics)
                parts.append(table)
        if domains is None or "samples" in domains:
            table = samples.format_summary(db, top=top or TOP_ROWS, cut=top is not None,
                                           funcs=sample_funcs)
            if table:  # call-stack sampling was on (--sample)
                parts.append(table)
        if domains is None or "counter_collection" in domains:
            if pmc.has_counters(db):  # hardware counters (--pmc/--sol): per kernel
                parts.append(pmc.format_kernel_counters(pmc.kernel_counters(db, **filters), top))
        if domains is None or "collectives" in domains:
            table = collectives_text.format_summary(db, top=top)
            if table:  # collective calls (--rccl-trace)
                parts.append(table)
        if domains is not None and not parts:
            parts.append(f"No {', '.join(domains)} records in these databases.\n")
        parts.append(format_drops(db))
        return "\n".join(parts)
    finally:
        if owned:
            db.close()
