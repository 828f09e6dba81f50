"""PC samples: where inside a kernel the time goes, per source line, instruction and stall reason.

Reads this project's ``rocpd_pc_sample`` table through the ``pc_samples`` view
(docs/pc-sampling-schema.md). A row counts the samples of one instruction (kernel, PC offset)
with one stall reason in one collection window. NVIDIA reports each stall reason twice: all
samples of it, and (``not_issued = 1``) the subset in which the warp issued nothing; totals and
shares here count the rows with ``not_issued = 0`` only, so no sample is counted twice.

``pc_samples(db)`` is the DataFrame (``pcSamples`` is the same in ROCm's camelCase), and
:func:`top_kernels` -> :func:`top_lines` -> :func:`top_instructions` narrow it down the way
``rocpd pcsamples`` prints it.
"""

from __future__ import annotations

import pandas as pd

from ..io.connection import Connection

__all__ = ["pc_samples", "pcSamples", "top_kernels", "top_lines", "top_instructions",
           "sampling_info", "has_pc_samples", "kernel_time_shares", "no_line_hint"]

_COLUMNS = ("guid", "pid", "agent_id", "correlation_id", "start", "end", "kernel_name", "name",
            "code_object", "pc_offset", "instruction", "source_file", "line",
            "instruction_comment", "stall_reason", "not_issued", "count")


def _db(db):
    """A Connection as given; paths (one, or a list) opened read-only."""
    return db if hasattr(db, "execute") else Connection(db)


def has_pc_samples(db) -> bool:
    """Whether any database of ``db`` holds a PC sample."""
    return _db(db).execute("SELECT 1 FROM rocpd_pc_sample LIMIT 1").fetchone() is not None


def pc_samples(db, kernel: str | None = None, not_issued: bool = False):
    """Every PC-sample row as a DataFrame (columns as the ``pc_samples`` view, ``code_object``
    as the unsigned cubin CRC). ``kernel``: only rows of that kernel (display or mangled name).
    ``not_issued=True`` keeps the not-issued subset rows too (they double-count samples)."""
    where, params = [], []
    if not not_issued:
        where.append("not_issued = 0")
    if kernel is not None:
        where.append("(name = ? OR kernel_name = ?)")
        params += [kernel, kernel]
    sql = (f"SELECT {', '.join(_q(c) for c in _COLUMNS)} FROM pc_samples"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id")
    df = _db(db).read_sql(sql, params)
    if df.empty:
        return pd.DataFrame(columns=list(_COLUMNS))
    # The writer stores the 64-bit CRC as a signed SQLite integer.
    df["code_object"] = df["code_object"].map(lambda v: None if v is None else int(v) & (2**64 - 1))
    return df


pcSamples = pc_samples  # ROCm-style camelCase alias


def _q(col: str) -> str:
    return f'"{col}"'


def _shares(df, by: list[str]):
    total = int(df["count"].sum())
    g = df.groupby(by, dropna=False, sort=False)["count"].sum().reset_index(name="samples")
    g["percent"] = 100.0 * g["samples"] / total if total else 0.0
    return g.sort_values(["samples", *by], ascending=[False, *([True] * len(by))],
                         ignore_index=True, kind="stable")


def top_kernels(db, limit: int | None = 20):
    """Kernels by PC samples: name, samples, percent (of all samples), top stall reason."""
    df = pc_samples(db)
    if df.empty:
        return pd.DataFrame(columns=["name", "samples", "percent", "top_stall"])
    out = _shares(df, ["name"])
    stall = (df.groupby(["name", "stall_reason"], dropna=False)["count"].sum().reset_index()
             .sort_values("count", ascending=False, kind="stable").drop_duplicates("name"))
    out = out.merge(stall[["name", "stall_reason"]].rename(columns={"stall_reason": "top_stall"}),
                    on="name", how="left")
    return out.head(limit) if limit else out


def top_lines(db, kernel: str, limit: int | None = 20):
    """Source lines of one kernel by samples: source_file, line, samples, percent (of the
    kernel's samples), top stall reason. Samples without line info form one row with line NaN."""
    df = pc_samples(db, kernel=kernel)
    out = _shares(df, ["source_file", "line"])
    stall = (df.groupby(["source_file", "line", "stall_reason"], dropna=False)["count"].sum()
             .reset_index().sort_values("count", ascending=False, kind="stable")
             .drop_duplicates(["source_file", "line"]))
    out = out.merge(stall.drop(columns="count").rename(columns={"stall_reason": "top_stall"}),
                    on=["source_file", "line"], how="left")
    return out.head(limit) if limit else out


def top_instructions(db, kernel: str, limit: int | None = 20, line: int | None = None):
    """Instructions (PC offsets) of one kernel by samples, with their stall reasons as
    "reason:samples" text, most first; ``line``: only that source line's instructions."""
    df = pc_samples(db, kernel=kernel)
    if line is not None:
        df = df[df["line"] == line]
    out = _shares(df, ["pc_offset", "source_file", "line", "instruction"])
    stalls = (df.groupby(["pc_offset", "stall_reason"], dropna=False)["count"].sum().reset_index()
              .sort_values(["pc_offset", "count"], ascending=[True, False], kind="stable"))
    text: dict[int, list[str]] = {}
    for pc, reason, n in zip(stalls["pc_offset"], stalls["stall_reason"], stalls["count"], strict=True):
        text.setdefault(pc, []).append(f"{reason if isinstance(reason, str) else '?'}:{n}")
    out["stalls"] = out["pc_offset"].map(lambda pc: ", ".join(text.get(pc, [])))
    return out.head(limit) if limit else out


def kernel_time_shares(db):
    """Per kernel name: share of PC samples and share of traced kernel time (percent), to see
    whether the samples spread like the time does."""
    samples = top_kernels(db, limit=None)[["name", "percent"]].rename(
        columns={"percent": "sample_percent"})
    times = _db(db).read_sql('SELECT name, SUM("end" - start) AS ns FROM kernels GROUP BY name')
    if times.empty:
        samples["time_percent"] = float("nan")
        return samples
    times["time_percent"] = 100.0 * times["ns"] / times["ns"].sum()
    out = samples.merge(times[["name", "time_percent"]], on="name", how="left")
    return pd.DataFrame(out)


def sampling_info(db) -> dict[str, str]:
    """The run's PC-sampling metadata (rocprof.pc_sampling.*), tags without the prefix; numbers
    are summed over the databases, text joined."""
    prefix = "rocprof.pc_sampling."
    out: dict[str, str] = {}
    for _guid, tag, value in _db(db).metadata():
        if not tag.startswith(prefix):
            continue
        key = tag[len(prefix):]
        if key in out and value.isdigit() and out[key].isdigit():
            out[key] = str(int(out[key]) + int(value))
        elif key in out and value not in out[key].split("; "):
            out[key] += "; " + value
        else:
            out.setdefault(key, value)
    return out


def no_line_hint(db) -> str:
    """Why samples lack a source line, for the text that lists them: NVIDIA's need the binary's
    line info; AMD's (rocprofiler-sdk's) come with none."""
    backend = sampling_info(db).get("backend", "")
    if backend.startswith("rocprofiler-sdk") and "cupti" not in backend:
        return "rocprofiler-sdk gives no source lines"
    return "build with nvcc -lineinfo"
