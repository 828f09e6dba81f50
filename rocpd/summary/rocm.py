"""``rocpd summary`` in ROCm's form: the tables, names, columns and files ROCm's own rocpd writes.

Tables (only those with rows): ``kernels_summary``, ``memory_copies_summary``,
``memory_allocations_summary`` (named by operation type: ALLOC, FREE, ...),
``scratch_memory_summary`` (likewise, the scratch operations only), one
``<category>_summary`` per region category family (``hip``, ``hsa``, ``cuda`` ...: the category's
first word, API functions by name), ``markers_summary`` (ROCTx ranges by message),
``domain_summary`` with ``domain_summary=True``; and each ``*_summary_by_rank`` besides (columns
ProcessID and Hostname first) with ``summary_by_rank=True``.

Columns, times in ns: ``Name, Calls, DURATION (nsec), AVERAGE (nsec), PERCENT (INC), MIN (nsec),
MAX (nsec), STD_DEV`` (sample standard deviation). As in ROCm, a domain row sums its table's
averages and standard deviations. ``region_categories``: None = all; ["NONE"] = no region tables;
otherwise only the named families (and tables matching them: KERNEL -> kernels_summary).
Region tables count instants (samples) too, named by their track (ROCTx marks by message),
as ROCm's summary reads ``regions_and_samples``. As in ROCm's SQL, STD_DEV of one call and a
percentage of a zero total are empty (NULL).
Files: ``OUTPUT_PATH/OUTPUT_FILE_<table>.<ext>`` (no ``OUTPUT_FILE_`` when it is empty, ROCm's
default); CSV as pandas writes it (ROCm's ``df.to_csv``).
"""

from __future__ import annotations

import os

import pandas as pd

from ..io.filters import Filter
from ..io.output_file import open_output
from ..textfmt import render
from .core import finish, partials
from .core import region_categories as _categories_of
from .rocm_formats import FORMATS  # noqa: F401 - part of this module's API
from .stats import clip_frame, cut, more_line

COLUMNS = ["Name", "Calls", "DURATION (nsec)", "AVERAGE (nsec)", "PERCENT (INC)", "MIN (nsec)",
           "MAX (nsec)", "STD_DEV"]
_RENAME = {"TotalDurationNs": "DURATION (nsec)", "AverageNs": "AVERAGE (nsec)",
           "Percentage": "PERCENT (INC)", "MinNs": "MIN (nsec)", "MaxNs": "MAX (nsec)",
           "StdDev": "STD_DEV", "pid": "ProcessID"}
# ROCm's summary reads every view with a duration: scratch operations are in both
# memory_allocations and scratch_memory, so counted twice in its domain table.
_VIEWS = (("kernels", "kernel"), ("memory_copies", "memory_copy"),
          ("memory_allocations", "memory_allocation"), ("scratch_memory", "scratch_memory"))
_PREFIX = {"memory_allocation": "MEMORY_ALLOCATION_", "scratch_memory": "SCRATCH_MEMORY_"}


def _family(category: str) -> str:
    c = category.lower()
    prefix = "rocm_" if c.startswith("rocm_") else ""
    return prefix + c[len(prefix):].split("_")[0]


def _matches(view: str, wanted: str) -> bool:
    return any(view == w or view.startswith(f"{w}_") for w in (wanted, f"{wanted}s"))


def _nodes_by_guid(db) -> dict:
    """{guid: (node key, hostname)}: a rank is a process of a node, so two hosts running the same
    pid are two ranks (ROCm's per-rank SQL joins processes on the pid alone and mixes them). A
    node is its machine id and hostname together: writers number nodes per file (ours 1), and
    cloned images share a machine id."""
    return {guid: (f"{mid}\0{host}", host) for rows in db.map(file_nodes_by_guid)
            for guid, mid, host in rows}


def file_nodes_by_guid(src) -> list:
    return src.conn.execute("SELECT P.guid, N.machine_id, N.hostname FROM rocpd_info_process P"
                            " LEFT JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid").fetchall()


_NODE = "_node"  # the node id of a by-rank row, dropped from the tables returned
_RANK = ["ProcessID", _NODE]  # a rank's key: the process and its node


def _table(df, by_rank: bool, nodes: dict):
    if df.empty:
        return None
    if by_rank:
        df = df.assign(node=df["guid"].map(lambda g: nodes.get(g, (None, None))[0]))
        out = finish(df, ("pid", "node", "name")).rename(columns=_RENAME | {"node": _NODE})
        hosts = {nid: host for nid, host in nodes.values()}
        out.insert(1, "Hostname", out[_NODE].map(hosts))
    else:
        out = finish(df).rename(columns=_RENAME)
    # ROCm's SQL divides by zero into NULL: no standard deviation of one call, no percentage of
    # a zero total (instants only).
    out.loc[out["Calls"] < 2, "STD_DEV"] = float("nan")
    dur = out["DURATION (nsec)"].astype(float)
    total = out.groupby(_RANK, dropna=False)["DURATION (nsec)"].transform("sum") if by_rank \
        else dur.sum()
    out["PERCENT (INC)"] = 100.0 * dur / total
    return out


def tables(db, domain_summary: bool = False, summary_by_rank: bool = False,
           region_categories=None, **filters) -> dict:
    """{table name: DataFrame} in ROCm's order and form (see the module's doc)."""
    flt = Filter.of(filters)
    wanted = None if region_categories is None else [c.lower() for c in region_categories]
    none = wanted == ["none"]
    ranks = [False, True] if summary_by_rank else [False]
    nodes = _nodes_by_guid(db) if summary_by_rank else {}
    out: dict = {}

    def add(name, kind, by_rank, categories=None, fix=None):
        df = partials(db, kind, flt, by_pid=by_rank, categories=categories, instants="all")
        if fix is not None and not df.empty:
            df["name"] = df["name"].map(fix)
        t = _table(df, by_rank, nodes)
        if t is not None:
            out[f"{name}_summary_by_rank" if by_rank else f"{name}_summary"] = t

    for view, kind in _VIEWS:
        if wanted is None or none or any(_matches(view, w) for w in wanted):
            strip = (lambda n, p=_PREFIX[kind]: n.removeprefix(p)) if kind in _PREFIX else None
            for r in ranks:
                add(view, kind, r, fix=strip)
    cats = _categories_of(db, instants="all")
    if not none:
        families: dict[str, list[str]] = {}
        for c in cats:
            if not c.upper().startswith("MARKER"):
                families.setdefault(_family(c), []).append(c)
        if wanted is not None:
            families = {w: [c for c in cats if c.lower() == w or c.lower().startswith(f"{w}_")]
                        for w in wanted if "marker" not in w}
        for fam, members in families.items():
            if members:
                for r in ranks:
                    add(fam, "region", r, categories=members)
        if wanted is None or any(w in ("marker", "markers") for w in wanted):
            markers = [c for c in cats if c.upper().startswith("MARKER")]
            if markers:
                for r in ranks:
                    add("markers", "region", r, categories=markers)
    if domain_summary:
        for r in ranks:
            dom = _domain(out, r)
            if dom is not None:
                out["domain_summary_by_rank" if r else "domain_summary"] = dom
    return {name: t.drop(columns=_NODE, errors="ignore") for name, t in out.items()}


def _domain(tabs: dict, by_rank: bool):
    suffix = "_summary_by_rank" if by_rank else "_summary"
    rows = []
    for name, t in tabs.items():
        if name.endswith(suffix) and not name.startswith("domain_"):
            t = t.assign(domain=name[: -len(suffix)].upper())
            rows.append(t)
    if not rows:
        return None
    keys = ["domain", *_RANK] if by_rank else ["domain"]
    g = pd.concat(rows, ignore_index=True).groupby(keys, sort=False, dropna=False).agg(**{
        "Calls": ("Calls", "sum"), "DURATION (nsec)": ("DURATION (nsec)", "sum"),
        "AVERAGE (nsec)": ("AVERAGE (nsec)", "sum"), "MIN (nsec)": ("MIN (nsec)", "min"),
        "MAX (nsec)": ("MAX (nsec)", "max"),
        "STD_DEV": ("STD_DEV", lambda v: v.sum(min_count=1)),  # SQL's SUM: NULL if all NULL
        **({"Hostname": ("Hostname", "first")} if by_rank else {})}).reset_index()
    total = g.groupby(keys[1:], dropna=False)["DURATION (nsec)"].transform("sum") if by_rank else \
        g["DURATION (nsec)"].sum()
    g["PERCENT (INC)"] = 100.0 * g["DURATION (nsec)"] / total
    g = g.rename(columns={"domain": "Name"})
    g = g.sort_values([*_RANK, "DURATION (nsec)"] if by_rank else ["DURATION (nsec)"],
                      ascending=[True, True, False] if by_rank else [False])
    lead = ["ProcessID", "Hostname"] if by_rank else []
    return g[lead + COLUMNS].reset_index(drop=True)


def write(tabs: dict, formats=("console",), output_path: str = "./rocpd-output-data",
          output_file: str = "out", stream=None, top: int | None = None) -> list[str]:
    """Print (console: at most ``top`` rows of each table, per process in the by-rank tables) or
    write (csv, html, json, md, pdf: every row) every table; returns the files written."""
    import sys

    stream = stream or sys.stdout
    written = []
    for name, df in tabs.items():
        for fmt in formats:
            if fmt == "console":
                shown = cut(df, top, "ProcessID" if "ProcessID" in df.columns else None)
                stream.write(f"\n{name.upper()}:\n{clip_frame(shown).to_string(index=False)}\n"
                             f"{more_line(shown, top)}")
                continue
            stem = f"{output_file}_{name}" if output_file else name
            path = os.path.join(output_path, f"{stem}.{fmt}")
            os.makedirs(output_path or ".", exist_ok=True)
            if fmt == "csv":  # ROCm's exporter: pandas' to_csv of the table
                with open_output(path, newline="") as fh:
                    df.to_csv(fh, index=False)
                written.append(path)
                continue
            cols = list(df.columns)
            rows = [tuple(r.values()) for r in df.to_dict("records")]  # native values
            if fmt == "pdf":
                from ..report.table_files import write_pdf

                write_pdf(path, [(name.upper(), cols, rows)])
            else:
                with open_output(path, newline="") as fh:
                    fh.write(render(cols, rows, "markdown" if fmt == "md" else fmt))
            written.append(path)
    return written
