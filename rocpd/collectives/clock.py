"""One clock for every rank. Processes on one host share CLOCK_BOOTTIME, so their times compare as
stored. Hosts do not: each host's clock has its own offset. A collective finishes on all its
ranks at (nearly) the same moment, because no rank can finish before the last rank's data has
arrived; the difference between two hosts' completion times of one collective is therefore their
clock offset plus an error no larger than the collective's own latency (the time its last step
takes to reach every rank). Over many collectives the offset is estimated as the middle of the
observed differences (midrange, after trimming the outer 5 % of them when there are 20 or
more), and its uncertainty as half their spread: every observed difference lies within the
latency of the true offset, so the estimate does too.

Completion = the end of the call's kernel (GPU time, on CLOCK_BOOTTIME as recorded); calls
without a known kernel are left out, since the end of an asynchronous host call is not its
completion.

Offsets are computed when read, never written into the databases: subtract a host's
``offset_ns`` from its times to put them on the reference host's clock (the host of the lowest
rank).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _match_keys(df):
    """The same collective on every rank: communicator, operation and its sequence number (NCCL
    counts them per communicator and operation), or, where not recorded, its ordinal among the
    rank's calls of that operation on that communicator."""
    ordinal = df.groupby(["guid", "comm", "op"]).cumcount()
    seq = df["seq"] if "seq" in df else ordinal
    seq = seq.where(seq.notna(), ordinal).astype("int64")
    return list(zip(df["comm"], df["op"], seq, strict=True))


def clock_offsets(calls):
    """DataFrame, one row per host: host, ranks, offset_ns (to subtract from that host's times),
    uncertainty_ns, collectives (how many it rests on), reference (bool). Empty with fewer than
    two hosts or no collective seen on two hosts."""
    cols = ["host", "ranks", "offset_ns", "uncertainty_ns", "collectives", "reference"]
    if calls is None or calls.empty or calls["host"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    df = calls[calls["kernel_end"].notna()].copy()
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["key"] = _match_keys(df)
    # Per host and collective: its ranks finish within the latency too; take their mean.
    ends = df.groupby(["host", "key"])["kernel_end"].mean().unstack(0)
    ranks = calls.groupby("host")["rank"].apply(
        lambda r: sorted({int(x) for x in r.dropna()}))
    by_min = sorted(ranks.index, key=lambda h: (ranks[h][0] if ranks[h] else 1 << 30, h))
    ref = by_min[0]
    rows = [{"host": ref, "ranks": ranks[ref], "offset_ns": 0, "uncertainty_ns": 0,
             "collectives": int(ends[ref].notna().sum()), "reference": True}]
    for h in by_min[1:]:
        both = ends[[ref, h]].dropna()
        d = np.sort((both[h] - both[ref]).to_numpy(dtype="float64"))
        if len(d) == 0:
            rows.append({"host": h, "ranks": ranks[h], "offset_ns": None, "uncertainty_ns": None,
                         "collectives": 0, "reference": False})
            continue
        if len(d) >= 20:
            cut = len(d) // 20
            d = d[cut:len(d) - cut]
        rows.append({"host": h, "ranks": ranks[h], "offset_ns": int(round((d[0] + d[-1]) / 2)),
                     "uncertainty_ns": int(round((d[-1] - d[0]) / 2)),
                     "collectives": len(both), "reference": False})
    return pd.DataFrame(rows, columns=cols)


def apply(calls, offsets):
    """``calls`` with start/end/kernel_start/kernel_end on the reference host's clock."""
    if offsets is None or offsets.empty:
        return calls
    off = dict(zip(offsets["host"], offsets["offset_ns"].fillna(0), strict=True))
    out = calls.copy()
    shift = out["host"].map(off).fillna(0)
    for c in ("start", "end", "kernel_start", "kernel_end"):
        out[c] = out[c] - shift
    return out


def arrival_waits(calls, offsets=None):
    """Per rank, on one clock (``offsets`` applied): how long it waited in its collectives for the
    last rank to arrive (arrival = the kernel's start, else the call's start), and how often it
    was the last. The straggler arrives last and waits least."""
    cols = ["rank", "collectives", "mean_wait_ns", "total_wait_ns", "last_arrivals"]
    if calls is None or calls.empty:
        return pd.DataFrame(columns=cols)
    df = apply(calls, offsets)
    df = df.assign(key=_match_keys(df),
                   arrival=df["kernel_start"].where(df["kernel_start"].notna(), df["start"]))
    last = df.groupby("key")["arrival"].transform("max")
    df = df.assign(wait=last - df["arrival"], is_last=df["arrival"] == last,
                   n=df.groupby("key")["rank"].transform("size"))
    df = df[df["n"] > 1]
    if df.empty:
        return pd.DataFrame(columns=cols)
    g = df.groupby("rank")
    out = pd.DataFrame({"collectives": g.size(), "mean_wait_ns": g["wait"].mean(),
                        "total_wait_ns": g["wait"].sum(), "last_arrivals": g["is_last"].sum()})
    return out.reset_index()[cols].sort_values("mean_wait_ns").reset_index(drop=True)
