"""Bounded databases (``rocprof run --max-size``, docs/long-runs.md): every step has a summary row
(rocprof_step_summary), only some keep their records. Readers take per-step times for every step
from the summaries and detail where it was kept, and say which steps were summarised."""

from __future__ import annotations

import json
import re

import pandas as pd

from rocshared.units import si

from ..errors import RocpdError
from .sites import _parse_site

_SUFFIX = re.compile(r"^_[0-9a-f_]+$")
COLUMNS = ["guid", "pid", "tid", "step", "name", "start", "end", "HostNs", "GpuBusyNs", "Kernels",
           "KernelNs", "Copies", "CopyBytes", "PageableCopies", "Syncs", "Records", "Detail",
           "Causes", "EnergyJ", "MemAllocBytes", "MemPeakBytes", "TopLine"]
# Columns a writer of an earlier release did not have (NULL there).
_LATER = {"energy_j": "EnergyJ", "mem_alloc_bytes": "MemAllocBytes",
          "mem_peak_bytes": "MemPeakBytes"}


def _top_lines(conn, suffix: str) -> dict[int, str]:
    """Each step's top launch line by kernel time ('file:line'), where the table exists."""
    table = f"rocprof_step_lines{suffix}"
    if conn.execute("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                    (table,)).fetchone() is None:
        return {}
    rows = conn.execute(
        f'SELECT L.step, substr(SN.call_stack, 2, length(SN.call_stack) - 2) FROM main."{table}" L'
        f' JOIN main."rocpd_event{suffix}" SN ON SN.id = L.site_id ORDER BY L.step, L.kernel_ns'
        f' DESC, L.site_id')
    out: dict[int, str] = {}
    for step, text in rows:
        if step not in out:
            out[step] = _parse_site(text)[0] or ""
    return out


def summaries(db) -> pd.DataFrame:
    """Every step of every bounded part of ``db`` (a Connection), kept whole or not, by step."""
    frames = []
    for src in db.sources():
        for part in src.parts:
            if not _SUFFIX.match(part.suffix):
                continue
            table = f"rocprof_step_summary{part.suffix}"
            if src.conn.execute("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND "
                                "name = ?", (table,)).fetchone() is None:
                continue
            have = {r[1] for r in src.conn.execute(f'PRAGMA main.table_info("{table}")')}
            later = "".join(f", T.{c} AS {a}" if c in have else f", NULL AS {a}"
                            for c, a in _LATER.items())
            df = pd.read_sql_query(
                f'SELECT ? AS guid, P.pid, T.step, COALESCE(S.string, \'\') AS name, T.start, '
                f'T."end", T."end" - T.start AS HostNs, T.gpu_busy_ns AS GpuBusyNs, '
                f'T.tid, T.kernels AS Kernels, T.kernel_ns AS KernelNs, T.copies AS Copies, '
                f'T.copy_bytes AS CopyBytes, T.pageable_copies AS PageableCopies, '
                f'T.syncs AS Syncs, T.records AS Records, T.detail AS Detail, '
                f'COALESCE(T.causes, \'\') AS Causes{later} FROM main."{table}" T '
                f'LEFT JOIN main."rocpd_string{part.suffix}" S ON S.id = T.name_id '
                f'LEFT JOIN (SELECT pid FROM main."rocpd_info_process{part.suffix}" LIMIT 1) P '
                f'ORDER BY T.step', src.conn, params=(part.guid,))
            top = _top_lines(src.conn, part.suffix)
            df["TopLine"] = [top.get(int(x), "") for x in df["step"]]
            frames.append(df)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    out["Detail"] = out["Detail"].astype(bool)
    return out[COLUMNS]


def facts(db) -> list[dict]:
    """The ``rocprof.bounded`` metadata of each bounded part (the writer's counts); through
    ``db.metadata()``, so a Dask connection gives them too."""
    out = []
    for guid, tag, value in db.metadata():
        if tag == "rocprof.bounded":
            try:
                out.append({"guid": guid, **json.loads(value)})
            except ValueError:
                continue
    return out


def describe(db, top: int = 5) -> list[str]:
    """Lines that say a database is bounded: its steps, those kept whole and the slowest."""
    lines = []
    found = facts(db)
    if not found:
        return lines
    try:
        s = summaries(db)
    except RocpdError:  # a Dask connection: the counts, without the per-step rows
        s = pd.DataFrame(columns=COLUMNS)
    for f in found:
        mine = s[s["guid"] == f["guid"]]
        kept = mine[mine["Detail"]]
        lines.append(
            f"bounded run (--max-size {si(f.get('max_size', 0), 'B')}, --keep {f.get('keep')}): "
            f"{f.get('steps', 0)} steps '{f.get('step_name', '')}', a summary for "
            f"{len(mine)}; {len(kept)} kept whole, the others summarised (records not stored: "
            f"{f.get('records_summarised', 0) + f.get('records_evicted', 0)}"
            + (f", {f['summaries_dropped']} steps without a summary: --max-size too small"
               if f.get("summaries_dropped") else "") + ")")
        for r in mine.nlargest(top, "HostNs").itertuples():
            lines.append(f"  step {r.step}: {r.HostNs / 1e6:.3f} ms, "
                         + ("kept whole" if r.Detail else "summarised")
                         + (f" ({r.Causes})" if r.Causes else "") + _figures(r))
    return lines


def _figures(r) -> str:
    """', 12.3 J, peak 1.5 GiB live, top line model.py:40' of the figures a step has."""
    out = ""
    if pd.notna(r.EnergyJ):
        out += f", {r.EnergyJ:.3g} J"
    if pd.notna(r.MemPeakBytes):
        out += f", peak {si(int(r.MemPeakBytes), 'B')} live"
    if r.TopLine:
        out += f", top line {r.TopLine}"
    return out


def step_numbers(p, starts) -> list | None:
    """The bounded run's step numbers of ranges starting at ``starts`` in process ``p`` (None:
    not a bounded database); analyses of kept steps keep the run's numbering."""
    s = getattr(p, "step_summary", None)
    if s is None or s.empty:
        return None
    by_start = dict(zip(s["start"].tolist(), s["step"].tolist(), strict=True))
    return [by_start.get(int(t), -1) for t in starts]


def attach(db, procs) -> None:
    """Each process's summary rows as ``p.step_summary`` (None where its database is not bounded)."""
    s = summaries(db)
    for p in procs:
        mine = s[(s["guid"] == p.guid)] if len(s) else s
        p.step_summary = mine.reset_index(drop=True) if len(mine) else None
