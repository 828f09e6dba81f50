"""Per-dispatch hardware counters (``rocprof run --pmc``/``--sol``, rocprofv3 ``--pmc``): read through
the ``counters_collection`` view (rocpd_pmc_event joined to its dispatch), as a long table, one
row per dispatch, a per-kernel summary, and rocprofv3's ``counter_collection.csv``.

Works the same on databases rocprofv3 wrote: the rows are where ROCm's writer puts them.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os

import pandas as pd

from .. import _schema
from ..io.filters import Filter, name_mask, resolve
from ..io.output_file import open_output
from ..summary.sql import local
from ..textfmt import clip_name

# counter_collection.csv as rocprofv3 writes it (rocprofiler-sdk, source/lib/output/
# generateCSV.cpp: generate_csv for counter records): one row per dispatch and counter.
CSV_HEADER = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id",
              "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
              "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name",
              "Counter_Value", "Start_Timestamp", "End_Timestamp"]

_COLUMNS = ("guid", "pid", "tid", "agent_id", "agent_log_index", "queue_id", "dispatch_id",
            "kernel_id", "kernel_name", "correlation_id", "grid_size", "workgroup_size",
            "lds_block_size", "scratch_size", "vgpr_count", "accum_vgpr_count", "sgpr_count",
            "counter_id", "counter_name", "value", "start", "end", "duration", "is_constant",
            "stack_id", "queue_handle")
# Computed columns (the rest are the view's own).
_EXPRESSIONS = {"queue_handle": _schema.queue_handle_sql()}


# Rows read at a time from a local file: counter_collection.csv has a row per dispatch and
# counter, so its memory stays bounded only if files are not read whole.
_CHUNK = 5_000


def _rows(db, flt: Filter):
    for rows in _chunks(db, flt):
        yield from rows


def _chunks(db, flt: Filter):
    """The rows, a list at a time: a local file's _CHUNK at a time; a Dask connection's workers
    read them (db.map, as the summaries read files), a file's at a time."""
    where, params = resolve(db, flt)
    cols = ", ".join(f'{_EXPRESSIONS[c]} AS "{c}"' if c in _EXPRESSIONS else f'"{c}"'
                     for c in _COLUMNS)
    sql = f"SELECT {cols} FROM counters_collection WHERE {where} ORDER BY start, dispatch_id, counter_name"
    if not local(db):
        yield from db.map(file_rows, sql, params, label="counters")
        return
    for src in db.sources():
        cur = src.conn.execute(sql, params)
        while rows := cur.fetchmany(_CHUNK):
            yield rows


def file_rows(src, sql: str, params: list) -> list[tuple]:
    return src.conn.execute(sql, params).fetchall()


_HAS_COUNTERS = ("SELECT 1 FROM rocpd_pmc_event PE JOIN rocpd_kernel_dispatch K"
                 " ON K.event_id = PE.event_id AND K.guid = PE.guid LIMIT 1")


def file_has_counters(src) -> bool:
    return src.conn.execute(_HAS_COUNTERS).fetchone() is not None


def has_counters(db) -> bool:
    """Whether any file has per-dispatch counter values (sampled device metrics, which also
    live in rocpd_pmc_event, are :mod:`rocpd.device_metrics`' and do not count)."""
    return any(db.map(file_has_counters, label="counters"))


def why_no_counters(db) -> str:
    """What a database without counter values says about why (its run's options and the
    counters' status in the metadata), as one sentence for `rocpd sol` and `rocpd summary`."""
    import json

    asked, status, notes, profiled = [], [], [], []
    for _guid, tag, value in db.metadata():
        if tag == "rocprof.options":
            try:
                o = json.loads(value)
            except ValueError:
                continue
            if isinstance(o, dict) and (o.get("sol") or o.get("pmc")):
                asked.append("--sol" if o.get("sol") else "--pmc " + " ".join(o.get("pmc") or []))
        elif tag == "rocprof.counters.status" and value != "on":
            status.append(value)
        elif tag == "rocprof.notes":
            try:
                notes += [n for n in json.loads(value) if "counters" in n]
            except (ValueError, TypeError):
                notes.append(value)
        elif tag == "rocprof.counters.launches_profiled":
            profiled.append(value)
    if not asked:
        return ("no hardware counters in these databases: the run did not ask for them; profile "
                "with `rocprof run --sol ...` (or --pmc NAME...)")
    head = f"no hardware counters in these databases, although the run asked for them ({asked[0]}): "
    if status:
        return head + f"the counters were {status[0]}"
    if notes:
        return head + notes[0]
    if profiled:
        return head + (f"{profiled[0]} kernel launches were profiled but no value was recorded "
                       "(see the rocprof.counters.* rows of rocpd_metadata)")
    return head + ("the run recorded no counter status: it ended before the counters were "
                   "written (killed?), or ran where no GPU backend was built in")


def counters(db, **filters):
    """Long form: one row per (dispatch, counter) with the dispatch's kernel, agent and times."""
    flt = Filter.of(filters)
    df = pd.DataFrame.from_records(list(_rows(db, flt)), columns=list(_COLUMNS))
    if flt.include or flt.exclude:
        df = df[name_mask(df["kernel_name"], flt)].reset_index(drop=True)
    return df


def per_dispatch(db, **filters):
    """One row per dispatch: its kernel, agent, start/end/duration (ns) and one column per counter
    (named as collected, e.g. ``dram__bytes_read.sum``)."""
    long = counters(db, **filters)
    keys = ["guid", "dispatch_id", "agent_id", "kernel_name", "start", "end", "duration"]
    if long.empty:
        return pd.DataFrame(columns=keys)
    wide = (long.groupby(keys + ["counter_name"], dropna=False, sort=False)["value"].sum(min_count=1)
            .unstack("counter_name").reset_index())
    wide.columns.name = None
    return wide.sort_values("start", ignore_index=True)


def kernel_counters(db, **filters):
    """Per kernel and counter: dispatches, mean, min, max and total over the dispatches (the
    ``rocpd summary`` counter table), kernels ordered by their total time."""
    long = counters(db, **filters)
    cols = ["Name", "Counter", "Dispatches", "Mean", "Min", "Max", "Total"]
    if long.empty:
        return pd.DataFrame(columns=cols)
    g = long.groupby(["kernel_name", "counter_name"], sort=False)["value"]
    out = pd.DataFrame({"Dispatches": g.size(), "Mean": g.mean(), "Min": g.min(), "Max": g.max(),
                        "Total": g.sum()}).reset_index()
    out = out.rename(columns={"kernel_name": "Name", "counter_name": "Counter"})
    time = (long.drop_duplicates(["guid", "dispatch_id"]).groupby("kernel_name")["duration"].sum())
    out["_t"] = out["Name"].map(time).fillna(0)
    out = out.sort_values(["_t", "Name", "Counter"], ascending=[False, True, True], kind="stable")
    return out[cols].reset_index(drop=True)


def format_kernel_counters(df, top: int | None = None) -> str:
    """The per-kernel counter table as text: one block per kernel (its ``top`` longest kernels)."""
    if df.empty:
        return ""
    lines = ["== COUNTER_COLLECTION (per kernel: mean [min, max] over dispatches) =="]
    names = list(dict.fromkeys(df["Name"]))
    for name in names[:top] if top else names:
        part = df[df["Name"] == name]
        lines.append(f"{clip_name(str(name))}  ({int(part['Dispatches'].max())} dispatches)")
        width = max(len(str(c)) for c in part["Counter"])
        for _, r in part.iterrows():
            spread = "" if r["Min"] == r["Max"] else f"  [{format_value(r['Min'])}, {format_value(r['Max'])}]"
            lines.append(f"  {str(r['Counter']):<{width}}  {format_value(r['Mean']):>18}{spread}")
    return "\n".join(lines) + "\n"


def format_value(v) -> str:
    """Counter values in tables: integers as integers, the rest with 4 significant digits."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    v = float(v)
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.4g}"


def csv_value(v) -> str:
    """rocprofv3's counter value format (csv.hpp numerical_formatter): fixed with 6 decimals from 1
    up, scientific with 8 below."""
    v = float("nan") if v is None else float(v)
    if math.isnan(v):
        return "nan"
    return f"{v:.6f}" if v >= 1 else f"{v:.8e}"


class _Number(float):
    """A float the csv module writes as rocprofv3 formats it (unquoted under QUOTE_NONNUMERIC)."""

    def __new__(cls, v):
        obj = float.__new__(cls, float("nan") if v is None else v)
        obj._text = csv_value(v)
        return obj

    def __repr__(self):
        return self._text

    __str__ = __repr__


def write_counter_collection(db, path: str, guid: bool = False, **filters) -> str | None:
    """``<path>_counter_collection.csv`` (rocprofv3's columns and value formats); None when the
    databases hold no counters. Agents are "Agent <logical index>" as rocprofv3 names them,
    Correlation_Id the dispatch's internal correlation id (stack_id), Queue_Id the runtime's queue
    id. ``guid``: ROCm's ``rocpd convert`` form, a first column "Pid" holding the database's guid
    (so ROCm's csv.cpp writes it)."""
    flt = Filter.of(filters)
    name = f"{path}_counter_collection.csv"
    ix = {c: i for i, c in enumerate(_COLUMNS)}
    w = None
    with contextlib.ExitStack() as opened:
        for rows in _chunks(db, flt):
            if rows and w is None:  # written when counters exist, even if the regexes keep none
                os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
                w = csv.writer(opened.enter_context(open_output(name, newline="")),
                               quoting=csv.QUOTE_NONNUMERIC)
                w.writerow(["Pid", *CSV_HEADER] if guid else CSV_HEADER)
            if rows and (flt.include or flt.exclude):
                keep = name_mask([r[ix["kernel_name"]] for r in rows], flt).tolist()
                rows = [r for r, k in zip(rows, keep, strict=True) if k]
            if w is not None:
                w.writerows(_csv_row(r, ix, guid) for r in rows)
    return name if w is not None else None


def _csv_row(r, ix: dict, guid: bool) -> list:
    log = r[ix["agent_log_index"]]
    return [*([r[ix["guid"]]] if guid else []),
            _int(r[ix["stack_id"]]), _int(r[ix["dispatch_id"]]),
            f"Agent {_int(log if log is not None else r[ix['agent_id']])}",
            _int(r[ix["queue_handle"]]), _int(r[ix["pid"]]), _int(r[ix["tid"]]),
            _int(r[ix["grid_size"]]), _int(r[ix["kernel_id"]]), r[ix["kernel_name"]] or "",
            _int(r[ix["workgroup_size"]]), _int(r[ix["lds_block_size"]]),
            _int(r[ix["scratch_size"]]), _int(r[ix["vgpr_count"]]),
            _int(r[ix["accum_vgpr_count"]]), _int(r[ix["sgpr_count"]]),
            r[ix["counter_name"]] or "", _Number(r[ix["value"]]),
            _int(r[ix["start"]]), _int(r[ix["end"]])]


def _int(v) -> int:
    return int(v) if v is not None else 0
