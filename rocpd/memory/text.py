"""The memory analysis as console text (rocpd memory, the report's section): bytes as KiB/MiB/GiB,
each device's peaks, the out-of-memory post-mortem."""

from __future__ import annotations

import pandas as pd

from ..textfmt import clip_frame


def header(m) -> str:
    """The figures the rest explains: each device's peaks, where the rows came from."""
    src = sorted({v.get("rocprof.memory.source", "") for v in m.sources.values()} - {""})
    lines = [f"rocpd memory: {', '.join(src) or 'allocation records'}; step range: "
             + (f"'{m.step_name}'" if m.step_name else "none")]
    for r in m.summary.itertuples(index=False):
        lines.append(f"{r.process} GPU {r.device}: {peaks(r)}; {r.AllocatorEvents} allocator events"
                     + (f", {r.OOMs} out-of-memory" if r.OOMs else ""))
    return "\n".join(lines)


def peaks(r) -> str:
    """'peak allocated 1.00 GiB, reserved 2.00 GiB, held at the driver 2.03 GiB' of a summary
    row; the driver's figure said unknown where no runtime allocation was recorded."""
    driver = fmt_bytes(r.PeakDriverBytes) if r.DriverEvents else "not recorded"
    return (f"peak allocated {fmt_bytes(r.PeakAllocatedBytes)}, reserved"
            f" {fmt_bytes(r.PeakReservedBytes)}, held at the driver {driver}")


def oom_text(m) -> str:
    out = []
    for r in m.oom.itertuples(index=False):
        free = fmt_bytes(r.DeviceFreeBytes)
        out.append(f"{r.process} GPU {r.device}: a request of {fmt_bytes(r.RequestBytes)} failed at"
                   f" {r.line} ({r.function or '?'}); the driver had"
                   f" {'an unknown amount' if free == '-' else free} free; allocated {fmt_bytes(r.AllocatedBytes)}, reserved"
                   f" {fmt_bytes(r.ReservedBytes)}, largest free block in the segments"
                   f" {fmt_bytes(r.LargestFreeBlockBytes)}")
        live = m.oom_live[(m.oom_live["oom"] == r.oom)]
        out.append("live then, by line:\n" + (_text_table(human(live.head(10))) if len(live)
                                              else "(nothing)"))
    return "\n".join(out)


def fmt_bytes(n) -> str:
    """'1.50 GiB', '12.0 MiB', '512 B'."""
    if n is None or n != n:
        return "-"
    n = float(n)
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(n) >= 1 << shift:
            return f"{n / (1 << shift):.2f} {unit}"
    return f"{int(n)} B"


def human(df):
    """Byte columns as 'MiB'/'GiB' text for printing (the DataFrames keep bytes)."""
    out = df.copy()
    for c in out.columns:
        if "Bytes" in c:
            out[c] = [fmt_bytes(v) for v in out[c]]
    return out


def _text_table(df) -> str:
    df = clip_frame(df)
    if "rank" in df.columns:
        df = df.assign(rank=[("-" if pd.isna(r) else int(r)) for r in df["rank"]])
    with pd.option_context("display.width", 250, "display.max_columns", 40,
                           "display.float_format", "{:.3f}".format, "display.max_colwidth", 70):
        return df.to_string(index=False, na_rep="-")
