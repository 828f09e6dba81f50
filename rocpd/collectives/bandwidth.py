"""Algorithm and bus bandwidth of collective calls, as nccl-tests defines them (its
doc/PERFORMANCE.md): algorithm bandwidth = S / t, with S the operation's data size and t its
time; bus bandwidth = algorithm bandwidth x a factor of the operation and the rank count n that
makes the figure comparable with the hardware's link speed:

    AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; Broadcast, Reduce, Send,
    Recv 1.

S follows nccl-tests: the per-rank buffer for AllReduce, Broadcast, Reduce, Send/Recv (count x
type size); the whole gathered (scattered) buffer for AllGather and ReduceScatter, whose count is
per rank (count x type size x n), and for AllToAll (count per peer x n). t is the call's kernel
time where the kernel is known, else the call's own duration (``time_source``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

_PER_RANK_COUNT = {"AllGather", "ReduceScatter", "AllToAll", "Gather", "Scatter"}


def bus_factor(op: str, nranks: int) -> float:
    n = max(int(nranks or 1), 1)
    if op == "AllReduce":
        return 2.0 * (n - 1) / n
    if op in ("AllGather", "ReduceScatter", "AllToAll", "Gather", "Scatter"):
        return (n - 1) / n
    return 1.0  # Broadcast, Reduce, Send, Recv


def message_bytes(op: str, nbytes: int, nranks: int) -> int:
    """nccl-tests' data size S of one call from its count x type size."""
    return int(nbytes) * (max(int(nranks or 1), 1) if op in _PER_RANK_COUNT else 1)


def size_bucket(nbytes: int) -> int:
    """The power of two at or above ``nbytes`` (0 stays 0)."""
    return 0 if nbytes <= 0 else 1 << max(0, math.ceil(math.log2(nbytes)))


def bucket_label(b: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b // size} {unit}"
    return f"{b} B"


def add_bandwidth(df):
    """Adds size_bytes (nccl-tests' S), bucket, time_ns, time_source, algbw_gbs, busbw_gbs."""
    nb = df["bytes"].fillna(0).astype("int64")
    nr = df["nranks"].fillna(1).astype("int64")
    df["size_bytes"] = [message_bytes(o, b, n) for o, b, n in zip(df["op"], nb, nr, strict=True)]
    df["bucket"] = df["size_bytes"].map(size_bucket)
    has_k = df["kernel_end"].notna()
    kt = (df["kernel_end"] - df["kernel_start"]).where(has_k)
    df["time_ns"] = kt.fillna(df["end"] - df["start"]).astype("float64")
    df["time_source"] = np.where(has_k, "kernel", "call")
    t = df["time_ns"].where(df["time_ns"] > 0)
    df["algbw_gbs"] = df["size_bytes"] / t  # bytes per ns = GB/s
    df["busbw_gbs"] = df["algbw_gbs"] * [bus_factor(o, n) for o, n in zip(df["op"], nr, strict=True)]
    return df


def summary(df):
    """Per operation and size bucket: calls, bytes, time, algorithm and bus bandwidth (GB/s of
    the summed bytes over the summed time, and the range of the per-call bus bandwidth)."""
    cols = ["Operation", "Size", "Calls", "Ranks", "TotalBytes", "TotalTimeNs", "AverageNs",
            "AlgBwGBs", "BusBwGBs", "MinBusBwGBs", "MaxBusBwGBs", "Time"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for (op, b), g in df.groupby(["op", "bucket"], sort=True):
        t = float(g["time_ns"].sum())
        alg = float(g["size_bytes"].sum()) / t if t > 0 else float("nan")
        n = int(g["nranks"].fillna(1).max())
        rows.append({"Operation": op, "Size": bucket_label(int(b)), "Calls": len(g),
                     "Ranks": n, "TotalBytes": int(g["size_bytes"].sum()), "TotalTimeNs": int(t),
                     "AverageNs": t / len(g), "AlgBwGBs": alg,
                     "BusBwGBs": alg * bus_factor(op, n),
                     "MinBusBwGBs": float(g["busbw_gbs"].min()),
                     "MaxBusBwGBs": float(g["busbw_gbs"].max()),
                     "Time": "kernel" if (g["time_source"] == "kernel").all() else "call"})
    return pd.DataFrame(rows, columns=cols)
