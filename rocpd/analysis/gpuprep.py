"""A process's GPU ops prepared for the analyses (rocpd.analysis.activity): classified (compute,
communication, memory), their copy directions and memory kinds, their Python lines, and the API
call that launched each; shared by the frame held whole and the chunks read in turn
(rocpd.analysis.chunks)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .gpuload import same, shared, text_is
from .sites import sites_of


def _prepare_gpu(gpu, comm_re):
    gpu = gpu.copy(deep=False)  # new columns, not new cells: the caller's frame is its own
    for c in ("start", "end", "tid", "agent", "stream", "corr"):
        if gpu[c].dtype != np.int64:
            gpu[c] = gpu[c].fillna(0).astype("int64")
    names = gpu["name"].astype(object)
    is_copy = text_is(gpu["op"], "copy")
    # Per distinct name (a few hundred), not per row (100k+).
    uniq = pd_unique(names)
    comm = names.map({n: bool(comm_re.search(str(n))) for n in uniq}).to_numpy(dtype=bool)
    # Texts as object columns whose cells share a few strings (see gpuload.texts).
    kinds = np.array(["compute", "comm", "memory"], dtype=object)
    gpu["kind"] = pd.Series(kinds[np.where(is_copy, 2, comm.astype(np.int64))], dtype=object,
                            index=gpu.index)
    direction = {n: _direction(str(n)) for n in uniq}
    gpu["direction"] = pd.Series(np.where(is_copy, names.map(direction).to_numpy(dtype=object),
                                          ""), dtype=object, index=gpu.index)
    gpu["src_memory"], gpu["dst_memory"] = _memory_columns(gpu["extdata"])
    gpu["site"], gpu["function"] = sites_of(gpu["line_info"])
    gpu["duration"] = gpu["end"] - gpu["start"]
    gpu = gpu.drop(columns=["extdata", "line_info"])
    if gpu["start"].is_monotonic_increasing:  # the usual order: a stable sort would keep it
        return gpu.reset_index(drop=True)
    return gpu.sort_values("start", kind="stable", ignore_index=True)


def _direction(name: str) -> str:
    for key, short in (("HOST_TO_DEVICE", "H2D"), ("DEVICE_TO_HOST", "D2H"),
                       ("DEVICE_TO_DEVICE", "D2D"), ("MEMORY_SET", "SET")):
        if key in name:
            return short
    return ""


def pd_unique(series):
    return pd.unique(series.to_numpy(dtype=object))


def _memory_columns(extdata):
    """(source, destination) memory kinds of each op from its extdata; "" for an op without
    extdata (every kernel: only the rows that have it are parsed, each distinct text once)."""
    has = extdata.notna().to_numpy()
    cols = [same(len(extdata), ""), same(len(extdata), "")]
    if has.any():
        ext = extdata[has]
        mem = {u: _memory_kinds(u) for u in ext.unique()}
        for k in (0, 1):
            cols[k][has] = shared(ext, lambda u, k=k: mem[u][k]).to_numpy()
    return (pd.Series(c, dtype=object, index=extdata.index) for c in cols)


def _memory_kinds(text):
    try:
        d = json.loads(text)
    except ValueError:
        return "", ""
    if not isinstance(d, dict):
        return "", ""
    return str(d.get("src_memory", "") or ""), str(d.get("dst_memory", "") or "")


def join_launches(gpu, idx) -> None:
    """The launch_* columns (and missing sites) of the ops of ``gpu``, in place."""
    gpu["launch_start"] = np.nan
    gpu["launch_end"] = np.nan
    gpu["launch_name"] = None
    gpu["launch_tid"] = gpu["tid"]
    if idx is None or gpu.empty:
        return
    hit = gpu["corr"].isin(idx.index) & (gpu["corr"] != 0)
    corr = gpu.loc[hit, "corr"]
    gpu.loc[hit, "launch_start"] = corr.map(idx["start"]).astype(float).to_numpy()
    gpu.loc[hit, "launch_end"] = corr.map(idx["end"]).astype(float).to_numpy()
    gpu.loc[hit, "launch_name"] = corr.map(idx["name"]).to_numpy()
    gpu.loc[hit, "launch_tid"] = corr.map(idx["tid"]).astype("int64").to_numpy()
    nosite = hit & gpu["site"].isna()
    if nosite.any():
        gpu.loc[nosite, "site"] = gpu.loc[nosite, "corr"].map(idx["site"]).to_numpy()
        gpu.loc[nosite, "function"] = gpu.loc[nosite, "corr"].map(idx["function"]).to_numpy()
