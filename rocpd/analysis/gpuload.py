"""A process's GPU work (kernels, copies, sets) as the columns rocpd.analysis.activity.load gives
it, read without a Python object per row where the rows repeat: each kernel row comes back from
SQLite as a few integers (its name as the symbol's id, mapped through the few hundred names
afterwards; its guid and op are the query's own), and a million-kernel database costs its arrays,
not a million tuples of strings.

The frame is the one the generic reader (activity._frame over the union of kernels and copies)
makes, column for column and dtype for dtype: integer columns as int64 arrays, any other column
as pandas infers it from the values (so a column of copy sizes beside kernels' NULLs is what it
was). tests/analysis/test_bounded_load.py holds the two side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["guid", "pid", "tid", "agent", "stream", "start", "end", "name", "op", "corr",
           "line_info", "bytes", "extdata", "src_agent", "dst_agent"]

_KERNELS = """
SELECT pid, tid, agent, stream, start, "end", name_id, corr, line_info FROM (
  SELECT K.guid, K.pid, K.tid, K.agent_id AS agent, K.stream_id AS stream, K.start, K."end",
         K.kernel_id AS name_id, E.stack_id AS corr, {line_info} AS line_info
  FROM rocpd_kernel_dispatch K
  LEFT JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
) WHERE ({where}) AND guid = ?
"""

_COPIES = """
SELECT pid, tid, agent, stream, start, "end", name, corr, line_info, bytes, extdata, src_agent,
       dst_agent FROM (
  SELECT M.guid, M.pid, M.tid,
         CASE WHEN DA.type = 'CPU' AND M.src_agent_id IS NOT NULL THEN M.src_agent_id
              ELSE M.dst_agent_id END AS agent,
         M.stream_id AS stream, M.start, M."end",
         COALESCE(N.string, 'MEMORY_COPY') AS name, E.stack_id AS corr, {line_info} AS line_info,
         M.size AS bytes, M.extdata, M.src_agent_id AS src_agent, M.dst_agent_id AS dst_agent
  FROM rocpd_memory_copy M
  LEFT JOIN rocpd_string N ON N.id = M.name_id AND N.guid = M.guid
  LEFT JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid
  LEFT JOIN rocpd_info_agent DA ON DA.id = M.dst_agent_id AND DA.guid = M.guid
) WHERE ({where}) AND guid = ?
"""

_SLICE = 50_000
_UNKNOWN = "(unknown)"


def column_pieces(cur, n_cols: int) -> tuple[list[list], int]:
    """The rows of ``cur`` as pieces per column: an int64 array where a slice is all integers,
    else the slice's values (equal texts shared, as SQLite gives each cell a new str)."""
    parts: list[list] = [[] for _ in range(n_cols)]
    pools: list = [{} for _ in range(n_cols)]
    n = 0
    while rows := cur.fetchmany(_SLICE):
        n += len(rows)
        for j, values in enumerate(zip(*rows, strict=True)):
            if all(type(v) is int for v in values):
                parts[j].append(np.fromiter(values, dtype=np.int64, count=len(values)))
                continue
            pool = pools[j]
            if pool is not None:
                values = [pool.setdefault(v, v) if type(v) is str else v for v in values]
                if len(pool) > _SLICE:
                    pools[j] = None  # mostly distinct: nothing to share
            parts[j].append(list(values))
        del rows
    return parts, n


def symbols(conn, guid: str) -> dict:
    """{symbol id: kernel name, as the union's COALESCE gives it} of part ``guid``."""
    return dict(conn.execute("SELECT id, COALESCE(display_name, kernel_name, ?) FROM"
                             " rocpd_info_kernel_symbol WHERE guid = ?", (_UNKNOWN, guid)))


def _names(conn, guid: str, ids: np.ndarray | list, table: dict | None = None) -> np.ndarray:
    """Each kernel's name from its symbol id (``table``: :func:`symbols`, read if not given),
    as objects."""
    if table is None:
        table = symbols(conn, guid)
    if isinstance(ids, np.ndarray):
        uniq, inv = np.unique(ids, return_inverse=True)
        names = np.array([table.get(int(i), _UNKNOWN) for i in uniq], dtype=object)
        return names[inv.reshape(-1)] if len(ids) else np.empty(0, dtype=object)
    return np.array([table.get(i, _UNKNOWN) if i is not None else _UNKNOWN for i in ids],
                    dtype=object)


def _column(pieces: list) -> object:
    """One column from its pieces (int64 arrays or lists), as the generic reader builds it, except
    that texts stay Python objects: pandas' str dtype copies every cell (a million copies of one
    guid, ~90 bytes each), an object column points at the few distinct strings."""
    if all(isinstance(p, np.ndarray) and p.dtype == np.int64 for p in pieces):
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if all(isinstance(p, np.ndarray) and p.dtype == object for p in pieces):
        return pd.Series(np.concatenate(pieces), dtype=object)
    values: list = []
    for p in pieces:
        values.extend(p.tolist() if isinstance(p, np.ndarray) else p)
    return texts(values)


def texts(values, index=None) -> pd.Series:
    """``values`` as pandas infers them (None beside numbers: floats), but a column of texts (and
    None) as objects, each cell the same str object as given."""
    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
        return pd.Series(values, dtype=object, index=index)
    return pd.Series(values, dtype=None, index=index)


def same(n: int, value) -> np.ndarray:
    """``n`` cells all pointing at ``value`` (np.full copies a str into every cell)."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


def text_is(column, value: str) -> np.ndarray:
    """Which cells of a text column (an object column of shared strings: kind, op, cause) are
    ``value``, as a bool array: numpy's element compare, a third of pandas' (which checks every
    cell for NaN first; these columns hold none)."""
    return np.asarray(column.to_numpy(dtype=object) == value, dtype=bool)


def shared(series: pd.Series, func) -> pd.Series:
    """``func`` of each distinct value of ``series`` (no NaN), as an object column whose cells
    share the results: a lookup per row, one call per distinct value."""
    codes, uniq = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=False)
    table = np.empty(len(uniq), dtype=object)
    table[:] = [func(u) for u in uniq]
    return pd.Series(table[codes], dtype=object, index=series.index)


def gpu_frame(conn, where: str, params: list, guid: str, line_info: str,
              kernels: bool = True) -> pd.DataFrame:
    """The GPU work of database part ``guid`` under the filter ``where``/``params`` (rows as the
    union of kernels then copies gives them, unsorted), with COLUMNS; only the copies with
    ``kernels`` False (a streamed process reads its kernels in chunks: rocpd.analysis.chunks)."""
    if kernels:
        cur = conn.execute(_KERNELS.format(where=where, line_info=line_info), [*params, guid])
        kp, nk = column_pieces(cur, 9)
    else:
        kp, nk = [[] for _ in range(9)], 0
    cur = conn.execute(_COPIES.format(where=where, line_info=line_info), [*params, guid])
    cp, nc = column_pieces(cur, 13)
    if nk + nc == 0:
        return pd.DataFrame.from_records([], columns=COLUMNS)
    k = dict(zip(["pid", "tid", "agent", "stream", "start", "end", "name_id", "corr", "line_info"],
                 kp, strict=True))
    c = dict(zip(["pid", "tid", "agent", "stream", "start", "end", "name", "corr", "line_info",
                  "bytes", "extdata", "src_agent", "dst_agent"], cp, strict=True))
    ids = k.pop("name_id")
    k["name"] = [_names(conn, guid, np.concatenate(ids) if all(isinstance(p, np.ndarray)
                                                              for p in ids)
                        else [v for p in ids for v in (p.tolist() if isinstance(p, np.ndarray)
                                                      else p)])] if nk else []
    k["guid"] = [same(nk, guid)] if nk else []
    k["op"] = [same(nk, "kernel")] if nk else []
    c["guid"] = [same(nc, guid)] if nc else []
    c["op"] = [same(nc, "copy")] if nc else []
    c["name"] = [np.array([v for p in c["name"] for v in p], dtype=object)] if nc else []
    data = {}
    for col in COLUMNS:
        kp_ = k.get(col, [[None] * nk] if nk else [])
        data[col] = _column([*kp_, *c[col]])
        kp_.clear() if isinstance(kp_, list) else None
        c[col] = None
    return pd.DataFrame(data, columns=COLUMNS, copy=False)  # the arrays, not a second block
