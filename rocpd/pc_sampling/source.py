"""A kernel's source with each line's share of its PC samples (``rocpd pcsamples --source``
and the report's "PC samples" section). The source file is read where it is on this machine
(the path the binary's line info names); where it is not, the sampled lines are listed alone."""

from __future__ import annotations

import os

from . import no_line_hint, pc_samples, sampling_info, top_kernels

CONTEXT = 3  # lines shown around each sampled line


def listing(db, kernel: str, context: int = CONTEXT) -> str:
    """Text: per source file of the kernel, its sampled lines (with ``context`` lines around)
    as ``percent  samples  line | text``; unsampled lines have blank counts."""
    df = pc_samples(db, kernel=kernel)
    if df.empty:
        return f"no PC samples of kernel {kernel!r}\n"
    total = int(df["count"].sum())
    out = []
    no_line = int(df.loc[df["line"].isna(), "count"].sum())
    for path, g in df[df["line"].notna()].groupby("source_file", sort=False):
        counts = g.groupby("line")["count"].sum()
        shown = int(counts.sum())
        out.append(f"{path}  ({100.0 * shown / total:.1f}% of the kernel's samples)")
        text = _read(path)
        wanted = sorted({int(n) + d for n in counts.index for d in range(-context, context + 1)
                         if int(n) + d >= 1})
        if text is None:
            out.append("  (source not found here: sampled lines only)")
            wanted = sorted(int(n) for n in counts.index)
        last = None
        for n in wanted:
            if text is not None and n > len(text):
                continue
            if last is not None and n > last + 1:
                out.append("  ...")
            c = int(counts.get(n, 0))
            share = f"{100.0 * c / total:6.1f}% {c:8d}" if c else " " * 16
            src = text[n - 1].rstrip("\n") if text is not None else ""
            out.append(f"  {share} {n:5d} | {src}")
            last = n
    if no_line:
        out.append(f"{100.0 * no_line / total:.1f}% of the samples have no line information "
                   f"({no_line_hint(db)})")
    return "\n".join(out) + "\n"


def _read(path) -> list[str] | None:
    if not isinstance(path, str) or not os.path.isfile(path):
        return None
    try:
        with open(path, errors="replace") as fh:
            return fh.readlines()
    except OSError:
        return None


def summary_text(db, top: int = 10) -> str:
    info = sampling_info(db)
    kern = top_kernels(db, limit=top)
    lines = [f"PC samples: {info.get('samples', '?')} (dropped {info.get('dropped', '?')}; "
             f"period {info.get('period', '?')}; collector CPU "
             f"{int(info.get('collector_cpu_ns', '0') or 0) / 1e6:.1f} ms)"]
    for r in kern.itertuples():
        lines.append(f"{r.percent:6.1f}% {r.samples:9d}  {r.name}  (top stall: {r.top_stall})")
    return "\n".join(lines) + "\n"

