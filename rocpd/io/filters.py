"""Filters shared by every DataFrame and summary: time window, kernel regex, process and rank.

A record is in a time window when its start lies in [lo, hi). Windows are given as nanoseconds from
the start of the run (``window``), percent of the run (``pct``), or between two ROCTx ranges
(``between=("A", "B")``: from the start of the first range named A to the end of the first range
named B that starts at or after it).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from rocshared import placeholders

from .. import _schema, regex
from ..errors import RocpdError
from . import time_window
from .time_window import run_bounds

_RANK_VARS = placeholders.RANK_VARIABLES


@dataclass
class Filter:
    window: tuple[int, int] | None = None
    pct: tuple[float, float] | None = None
    between: tuple[str, str] | None = None
    include: str | None = None  # kernel-name regex to keep
    exclude: str | None = None  # kernel-name regex to drop
    pid: int | list[int] | None = None
    rank: int | list[int] | None = None
    # ROCm's time window (rocpd.io.time_window): absolute ns or "N%", ROCTx marker messages;
    # inclusive as ROCm's code: True keeps records wholly inside, False overlapping ones.
    start: str | int | float | None = None
    end: str | int | float | None = None
    start_marker: str | None = None
    end_marker: str | None = None
    inclusive: bool = True

    def __post_init__(self):
        # A bad kernel regex is reported before any file is read, with the capture's wording.
        for pattern in (self.include, self.exclude):
            if pattern:
                _kernel_regex(pattern)

    @classmethod
    def of(cls, kw: dict) -> Filter:
        names = set(cls.__dataclass_fields__)
        bad = set(kw) - names
        if bad:
            raise TypeError(f"unknown filter option(s): {', '.join(sorted(bad))}")
        return cls(**kw)


def _as_list(v):
    return None if v is None else [int(x) for x in (v if isinstance(v, (list, tuple, set)) else [v])]


def rank_of(db) -> dict[str, int | None]:
    """guid -> rank (None where the process was not one of several ranks); see :func:`file_ranks`."""
    return {guid: rank for found in db.map(file_ranks) for guid, rank in found.items()}


def _rank_value(value) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() else None


_RANK_IN_NAME = re.compile(r"(?:^|[^a-z])rank[-_.]?(\d+)(?!\d)", re.I)


def rank_in_path(path: str) -> int | None:
    """A rank written into the file name by an output template (``-o rank%rank%``,
    ``rank_%rank%/...``): the digits after the last "rank" in the path's last two components."""
    import os

    tail = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
    found = _RANK_IN_NAME.findall(tail)
    return int(found[-1]) if found else None


def file_ranks(src) -> dict[str, int | None]:
    """guid -> rank for one file's parts. The recorded environment decides where it exists: the
    first of RANK (torchrun), OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI),
    SLURM_PROCID (srun), PMIX_RANK that holds a number, else no rank (a torchrun agent, a
    DataLoader worker's parent...). Without an environment (other writers) the ``rocprof.rank``
    metadata, then a rank in the file name (``%rank%`` in the output template)."""
    out: dict[str, int | None] = {}
    for p in src.parts:
        rows = src.conn.execute(
            "SELECT environment FROM rocpd_info_process WHERE guid = ?", (p.guid,)).fetchall()
        envs = []
        for (env,) in rows:
            try:
                env = json.loads(env or "{}")
            except ValueError:
                continue
            if isinstance(env, dict) and env:
                envs.append(env)
        rank = None
        if envs:
            for env in envs:
                rank = next((r for k in _RANK_VARS if (r := _rank_value(env.get(k))) is not None),
                            None)
                if rank is not None:
                    break
        else:
            rank = _rank_value(p.metadata.get("rocprof.rank"))
            if rank is None:
                rank = rank_in_path(src.path)
        out[p.guid] = rank
    return out


def resolve(db, flt: Filter) -> tuple[str, list]:
    """SQL condition (over columns start, "end", pid, guid of the queried row) and its parameters;
    "end" only appears with ROCm's window options."""
    conds, params = [], []
    lo = hi = None
    if flt.window is not None or flt.pct is not None:
        t0, t1 = run_bounds(db)
        if flt.window is not None:
            lo, hi = t0 + int(flt.window[0]), t0 + int(flt.window[1])
        else:
            span = t1 - t0
            lo, hi = t0 + int(span * flt.pct[0] / 100.0), t0 + int(span * flt.pct[1] / 100.0)
            if flt.pct[1] >= 100:
                hi = t1 + 1
    if flt.between is not None:
        a, b = flt.between
        lo2, hi2 = _marker_window(db, a, b)
        lo = lo2 if lo is None else max(lo, lo2)
        hi = hi2 if hi is None else min(hi, hi2)
    if lo is not None:
        conds.append("start >= ? AND start < ?")
        params += [lo, hi]
    if any(v is not None for v in (flt.start, flt.end, flt.start_marker, flt.end_marker)):

        w_lo, w_hi = time_window.bounds(db, flt.start, flt.end, flt.start_marker, flt.end_marker)
        cond, w_params = time_window.condition(w_lo, w_hi, flt.inclusive)
        conds.append(cond)
        params += w_params
    pids = _as_list(flt.pid)
    if pids is not None:
        conds.append(f"pid IN ({','.join('?' * len(pids))})")
        params += pids
    ranks = _as_list(flt.rank)
    if ranks is not None:
        guids = [g for g, r in rank_of(db).items() if r in ranks]
        conds.append(f"guid IN ({','.join('?' * len(guids)) or 'NULL'})")
        params += guids
    return (" AND ".join(conds) or "1"), params


def _marker_window(db, a: str, b: str) -> tuple[int, int]:
    starts = [s for s in db.map(file_first_range_start, a) if s is not None]
    if not starts:
        raise RocpdError(f"no ROCTx range named {a!r}")
    lo = min(starts)
    ends = [e for e in db.map(file_first_range_end, b, lo) if e is not None]
    if not ends:
        raise RocpdError(f"no ROCTx range named {b!r} after {a!r}")
    return lo, min(ends) + 1


def file_first_range_start(src, name: str):
    sql = f"SELECT MIN(start) FROM regions WHERE name = ? OR {_schema.roctx_message_sql()} = ?"
    return src.conn.execute(sql, (name, name)).fetchone()[0]


def file_first_range_end(src, name: str, lo: int):
    sql = (f"SELECT MIN(\"end\") FROM regions WHERE (name = ? OR {_schema.roctx_message_sql()} = ?)"
           " AND start >= ?")
    return src.conn.execute(sql, (name, name, lo)).fetchone()[0]


@functools.lru_cache(maxsize=32)
def _compiled(pattern: str) -> regex.Regex:
    # Shared by every call (and thread) with the same pattern, so is its per-name memory.
    return regex.compile(pattern)


def _kernel_regex(pattern: str) -> regex.Regex:
    try:
        return _compiled(pattern)
    except ValueError as e:
        raise RocpdError(str(e)) from None


def name_mask(names, flt: Filter):
    """Boolean pandas mask applying the include/exclude kernel regexes to a Series of names, in
    the capture's dialect (glibc POSIX ERE, :mod:`rocpd.regex`). Missing names match as ""."""
    import pandas as pd

    if not isinstance(names, pd.Series):
        names = pd.Series(list(names), dtype=object)
    mask = pd.Series(True, index=names.index, dtype=bool)
    if flt.include:
        mask &= _kernel_regex(flt.include).mask(names)
    if flt.exclude:
        mask &= ~_kernel_regex(flt.exclude).mask(names)
    return mask
