"""A view's rows as DataFrames of at most ``chunksize`` rows each, in the order the whole frame
has them (``db.kernels(chunksize=10_000)``): memory bounded by the chunk whatever the record
count, where ``db.kernels()`` holds every row at once (a million kernels: ~2 GB). A row of the
kernels view (~35 columns) costs ~3 KB while its chunk is made: 10,000 rows a chunk kept a
million-kernel pass at ~110 MB, 50,000 at ~240 MB.

Each file is read by its own cursor in start order; with several files their rows are merged by
start (heapq.merge keeps the files' order among equal starts, as the stable sort of the whole
frame does). A chunk has the whole frame's columns, values and index labels (the position in the
whole frame); its dtypes are those the whole frame's rules give for the chunk's own values (an
integer column with a missing value in the chunk is Int64 there, as it would be throughout the
whole frame when any row missed one; texts in pandas' "str" dtype, as the frame of one file has
them, where the frame of several files has "string")."""

from __future__ import annotations

import heapq
from collections.abc import Iterator

import pandas as pd

from ..errors import RocpdError
from ..io.filters import Filter, name_mask, resolve


def frames(db, view: str, flt: Filter, chunksize: int, normalise, order: str = "start",
           names: bool = False) -> Iterator[pd.DataFrame]:
    """DataFrames of ``SELECT * FROM view`` (``flt`` applied; ``names``: the kernel-name
    regexes too), ``chunksize`` rows at most, with ``normalise(df)`` giving each its dtypes."""
    if not isinstance(chunksize, int) or chunksize <= 0:
        raise RocpdError(f"chunksize must be a positive number of rows, not {chunksize!r}")
    where, params = resolve(db, flt)
    source = view if view.startswith("(") else f'"{view}"'
    sql = f'SELECT * FROM {source} WHERE {where} ORDER BY "{order}"'
    cursors = [src.conn.execute(sql, params) for src in db.sources()]
    if not cursors:
        return
    cols = [d[0] for d in cursors[0].description]
    key = cols.index(order)
    if len(cursors) == 1:
        batches = iter(lambda: cursors[0].fetchmany(chunksize), [])
    else:
        batches = _batches(heapq.merge(*cursors, key=lambda r: r[key]), chunksize)
    offset = 0
    for batch in batches:
        df = normalise(pd.DataFrame.from_records(batch, columns=cols))
        del batch
        if names and (flt.include or flt.exclude):
            df = df[name_mask(df["name"], flt)].reset_index(drop=True)
        df.index = pd.RangeIndex(offset, offset + len(df))
        offset += len(df)
        if len(df):
            yield df


def _batches(rows, size: int):
    batch: list = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
