"""Tables as text, shared by every printer (summaries, counters, ranks, analyze, report): long
names clipped, time columns in a chosen unit. A base module: frames come in as arguments, pandas
is imported only where a dtype is checked."""

from __future__ import annotations

import html
import json

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME_COLS = ("TotalDuration", "Average", "Min", "Max")
# Console and markdown tables show at most NAME_WIDTH characters of a name: a table pads every row
# to its longest cell, so one 1 MB ROCTx message among 10,000 names made a 24 GB summary. 60 keeps
# a row readable on a terminal. The ellipsis goes in the middle, keeping the first 40 characters
# (namespace, kernel or range name) and the last 17 (template arguments, suffixes), which tell
# most long names apart. CSV and JSON outputs keep every name whole.
NAME_WIDTH = 60
_HEAD = 40


def clip_name(text: str, width: int = NAME_WIDTH) -> str:
    """``text`` if it fits in ``width`` characters, else its head and tail around "..."."""
    if len(text) <= width:
        return text
    head = min(_HEAD, width - 3)
    return text[:head] + "..." + text[len(text) - (width - 3 - head):]


# Reports (HTML, Markdown, the timeline's names) show at most this many characters of a text;
# a longer one keeps its head and tail and says how long it was: 100 ROCTx messages of 1 MB made
# a 105 MB page.
TEXT_WIDTH = 200


def clip_long(text: str, width: int = TEXT_WIDTH) -> str:
    """``text`` if it fits in ``width`` characters, else its head and tail around "…" followed by
    its length, e.g. "abc…xyz (1,048,576 characters)"."""
    if len(text) <= width:
        return text
    head = width * 2 // 3
    return f"{text[:head]}…{text[len(text) - (width - head - 1):]} ({len(text):,} characters)"


def clip_frame(df):
    """A copy of ``df`` with every text cell clipped by :func:`clip_name`, for console tables."""
    import pandas as pd

    df = df.copy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):  # object or (pandas 3) str dtype
            df[c] = df[c].map(lambda v: clip_name(v) if isinstance(v, str) else v)
    return df


def scale(df, units: str = "ns"):
    """Convert the time columns to ``units`` (ns, us, ms, s), renaming them accordingly."""
    if units not in _UNITS:
        raise ValueError(f"units must be one of {', '.join(_UNITS)}")
    if units == "ns":
        return df
    df = df.copy()
    for c in list(df.columns):
        if c.startswith(_TIME_COLS) and c.endswith("Ns"):
            df[c] = df[c] / _UNITS[units]
            df = df.rename(columns={c: c[:-2] + units.capitalize()})
    df["StdDev"] = df["StdDev"] / _UNITS[units]
    return df


# Timestamps of the step tables, shown as times from the run's first recorded activity.
_STAMPS = {"start": "Start", "end": "End", "host_start": "HostStart", "host_end": "HostEnd"}


def scaled(df, units: str, t0: int | None = None):
    """``*Ns`` columns in ``units`` (renamed); with ``t0`` (the run's first recorded activity,
    ns) the timestamp columns too, as times from it (start -> StartMs ...)."""
    div = _UNITS[units]
    out = df.copy()
    ren = {}
    for c in out.columns:
        if isinstance(c, str) and c.endswith("Ns") and div != 1:
            out[c] = out[c].astype(float) / div
            ren[c] = c[:-2] + units.capitalize()
        elif t0 is not None and c in _STAMPS:
            out[c] = (out[c].astype(float) - t0) / div
            ren[c] = _STAMPS[c] + units.capitalize()
    return out.rename(columns=ren)


# Every console table (rocpd's commands, `rocprof run -S`) shows this many rows unless told
# otherwise (--top N, --all): the headline tables of a run and its findings fit one screen.
TOP_ROWS = 10


def more_rows(left: int, how: str = "--all") -> str:
    """The line under a table cut to its top rows: how many were left out and how to see them
    ("… and 12 more (use --all)"); ``how`` names the command where the option is not enough."""
    return f"… and {left} more (use {how})"


def samples_missed(missed: int, taken: int) -> tuple[str, float]:
    """The words for call-stack samples lost (timer ticks not taken, samples not stored): one
    text wherever they are reported (the findings, the summaries' drop counts), and the share
    of the intended samples they are."""
    intended = taken + missed
    share = missed / intended if intended else 1.0
    pct = f"{100.0 * share:.0f} %" if share >= 0.01 or share == 0 else f"{100.0 * share:.1f} %"
    return (f"{missed:,} of {intended:,} call-stack samples were not taken or not stored ({pct}):"
            " the sample counts undercount that much"), share


# What to do about missed samples, beside samples_missed's words.
SAMPLES_MISSED_ADVICE = "sample less often (--sample HZ), or with --sampling-method thread"


def records_were(n: int) -> str:
    """'1 record was' / '2,345 records were'."""
    return f"{n:,} record was" if n == 1 else f"{n:,} records were"


def render(cols, rows, fmt: str) -> str:
    """Rows under their columns in ``fmt``: csv (as pandas writes it), json, html, md/markdown,
    or console (padded columns and a row count); the tables for reading clip long values."""
    if fmt == "csv":  # as ROCm's query writes it: pandas' to_csv of the result
        import pandas as pd

        frame = pd.DataFrame.from_records(rows, columns=cols, coerce_float=True)
        return frame.to_csv(index=False, lineterminator="\n")
    if fmt == "json":
        return json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=1) + "\n"
    if fmt == "html":
        cell = lambda v: html.escape("" if v is None else str(v))  # noqa: E731
        lines = ['<table border="1" class="dataframe">', "<thead><tr>"]
        lines += [f"<th>{cell(c)}</th>" for c in cols] + ["</tr></thead>", "<tbody>"]
        lines += ["<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows]
        return "\n".join(lines + ["</tbody>", "</table>"]) + "\n"
    if fmt == "md":
        fmt = "markdown"

    # Tables for reading are clipped (NAME_WIDTH): one huge value would otherwise
    # pad every row of the console table to its length.
    cols = [clip_name(c) for c in cols]
    text = [[("" if v is None else clip_name(str(v))) for v in r] for r in rows]
    if fmt == "markdown":
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(map(esc, cols)) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(map(esc, r)) + " |" for r in text]
        return "\n".join(lines) + "\n"
    widths = [max([len(c), *(len(r[i]) for r in text)]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(lines) + f"\n({len(rows)} rows)\n"
