"""Sampled counters over time: the device and host metrics of ``rocprof run --process-freq``,
and any database that stores sampled counters as rocprofiler-systems does (its AMD SMI, CPU
frequency and process samples).

The layout (rocprof-sys's rocpd writer, which ours follows): a ``rocpd_info_pmc`` row per
(agent, counter); a ``rocpd_track`` per counter and device, named ``"<counter> [<device>]"``
(or the counter's own name) with no thread; per value a ``rocpd_sample`` on that track holding
the time and a ``rocpd_pmc_event`` on the sample's event holding the value. They are read
through the ``metric_samples`` view: ROCm's ``samples`` view leaves thread-less tracks out.
Per-kernel counters (``--pmc``) have no sample and are not read here.

    samples(db, metrics=None, **filters) -> DataFrame    one row per value
    summary(db, metrics=None, **filters) -> DataFrame    min/mean/max per counter and device
    format_summary(db, **filters) -> str                 the table `rocpd summary` prints

Filters are the shared ones (:mod:`rocpd.io.filters`): a window keeps values whose time lies in it.
"""

from __future__ import annotations

import pandas as pd

from ..io.filters import Filter, resolve
from ..textfmt import more_rows

# The schema's metric_samples view (one row per value, each on its counter's sample), with the
# window columns the shared filters name.
_ROWS = """
SELECT guid, pid, timestamp AS start, timestamp AS "end", timestamp, value, pmc_id, metric,
       symbol, units, description, agent_id, agent_type, agent_abs_index AS agent_index, track,
       category
FROM metric_samples
"""

COLUMNS = ["guid", "host", "pid", "timestamp", "value", "metric", "symbol", "units",
           "description", "agent_id", "agent_type", "agent_index", "agent", "track", "category"]
SUMMARY_COLUMNS = ["Agent", "Metric", "Units", "Samples", "Min", "Mean", "Max"]
# rocpd.device_metrics.gpu_metrics.CATEGORIES: the GPU-metrics samplers' (NVIDIA, AMD)
PM_CATEGORIES = ("cupti_pm_sampling", "rocprofiler_sdk_device_counting")


def _agent_label(agent_type, index) -> str:
    if agent_type == "CPU":
        return "CPU"
    if agent_type is None:
        return "(unknown agent)"
    return f"{agent_type} {index if index is not None else '?'}"


def source_rows(conn, where: str, params: list) -> list[tuple]:
    """(guid, pid, timestamp, value, track, units, agent_type, agent_index) of one file's sampled
    counter values in ``where`` (a :func:`rocpd.io.filters.resolve` condition), ordered by time:
    what the timeline exporters draw as counter tracks."""
    return conn.execute(
        f'SELECT guid, pid, timestamp, value, COALESCE(track, metric), units, agent_type,'
        f' agent_index FROM ({_ROWS}) WHERE {where} ORDER BY timestamp', params).fetchall()


def samples(db, metrics=None, **filters):
    """Every sampled counter value: one row per (counter, device, time), ordered by time.
    ``metrics``: counter names (``device_busy_gfx``) or track names (``device_busy_gfx [0]``)
    to keep; None keeps all."""
    flt = Filter.of(filters)
    where, params = resolve(db, flt)
    # Through db.map, as the summaries read files: on a Dask connection the workers read them.
    frames = [pd.DataFrame.from_records(rows, columns=cols)
              for cols, rows in db.map(file_samples, where, params, label="device metrics")]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df["agent"] = [_agent_label(t, i) for t, i in zip(df["agent_type"], df["agent_index"], strict=True)]
    # A process is a pid on a host: two hosts may run the same pid.
    hosts = {g: h for rows in db.map(file_hosts) for g, h in rows}
    df["host"] = df["guid"].map(hosts)
    df["track"] = df["track"].fillna(df["metric"])
    if metrics is not None:
        wanted = {metrics} if isinstance(metrics, str) else set(metrics)
        df = df[df["metric"].isin(wanted) | df["track"].isin(wanted)]
    df = df.sort_values(["timestamp", "track"], kind="stable")
    return df[COLUMNS].reset_index(drop=True)


def file_samples(src, where: str, params: list) -> tuple[list[str], list[tuple]]:
    """One database's sampled counter rows in ``where``: (column names, rows)."""
    cur = src.conn.execute(f"SELECT * FROM ({_ROWS}) WHERE {where}", params)
    return [d[0] for d in cur.description], cur.fetchall()


def file_hosts(src) -> list[tuple]:
    """(guid, hostname) of one file's processes."""
    return src.conn.execute("SELECT P.guid, N.hostname FROM rocpd_info_process P LEFT JOIN"
                            " rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid").fetchall()


def names(db) -> list[str]:
    """Counter names that have sampled values, sorted."""
    out: set[str] = set()
    for f in db.sources():
        out.update(r[0] for r in f.conn.execute(
            "SELECT DISTINCT I.name FROM rocpd_info_pmc I WHERE EXISTS (SELECT 1 FROM"
            " rocpd_pmc_event PE JOIN rocpd_sample SA ON SA.event_id = PE.event_id AND"
            " SA.guid = PE.guid WHERE PE.pmc_id = I.id AND PE.guid = I.guid)"))
    return sorted(n for n in out if n)


def summary(db, metrics=None, **filters):
    """Min, mean and max of every counter per device (the mean of the samples, which are
    evenly spaced in time), with the number of samples. One row per (process, agent, track), a
    process being a pid on a host: a pid column leads when the databases hold more than one
    process, a host column when they come from more than one host."""
    df = samples(db, metrics, **filters)
    # The PM sampler's values stand for time until the next (repeats are not stored): their
    # means are over time, in rocpd.device_metrics.gpu_metrics (summary's GPU_METRICS).
    df = df[~df["category"].isin(PM_CATEGORIES)]
    if df.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    df = df.assign(host=df["host"].fillna(""))
    g = df.groupby(["host", "pid", "agent", "track", "units"], sort=False, dropna=False)[
        "value"].agg(["count", "min", "mean", "max"]).reset_index()
    out = pd.DataFrame({"host": g["host"], "pid": g["pid"], "Agent": g["agent"],
                        "Metric": g["track"], "Units": g["units"].fillna(""),
                        "Samples": g["count"].astype("int64"), "Min": g["min"], "Mean": g["mean"],
                        "Max": g["max"]})
    out = out.sort_values(["host", "pid", "Agent", "Metric"], key=_natural, kind="stable")
    if out[["host", "pid"]].drop_duplicates().shape[0] == 1:
        out = out.drop(columns="pid")
    if out["host"].nunique() == 1:
        out = out.drop(columns="host")
    return out.rename(columns={"host": "Host"}).reset_index(drop=True)


def _natural(col):
    """Sort key: "cpu_load [10]" after "cpu_load [9]"."""
    import re

    if col.dtype.kind in "iuf":
        return col
    return col.map(lambda s: tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))))


def format_summary(db, top: int | None = None, **filters) -> str:
    """`rocpd summary`'s DEVICE_METRICS table ("" when the databases hold no sampled counters)."""
    df = summary(db, **filters)
    if df.empty:
        return ""
    shown = df.head(top) if top is not None else df
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 250, "display.float_format", "{:.3f}".format):
        body = shown.to_string(index=False)
    more = f"{more_rows(len(df) - top)}\n" if top is not None and len(df) > top else ""
    return f"== DEVICE_METRICS ==\n{body}\n{more}"
