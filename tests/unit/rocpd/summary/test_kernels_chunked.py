"""db.kernels(chunksize=N): the whole frame's rows in DataFrames of at most N rows, in its order
and with its index, over databases written by the real writer (one file, and two files whose
kernels interleave in time, with equal starts across files), under the shared filters."""

from __future__ import annotations

import random

import pandas as pd
import pytest

import rocpd
from rocpd.testing import DatabaseBuilder


def _write(path, pid, seed, n=2500):
    rng = random.Random(seed)
    with DatabaseBuilder(path, pid=pid) as b:
        t = 1_000_000
        for i in range(n):
            start = t + rng.randrange(0, 3) * 1_000  # equal starts within and across files
            b.kernel(f"kern_{i % 7}", start, start + rng.randrange(500, 5_000),
                     stream=rng.choice([0, 1]))
            t += 2_000
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("chunked")
    return [_write(d / "a.db", 21, 1), _write(d / "b.db", 22, 2)]


@pytest.mark.parametrize("which", ["one", "two"])
@pytest.mark.parametrize("kw", [{}, {"include": "kern_[12]"}, {"pid": 22}, {"start": "20%", "end": "60%"}],
                         ids=["all", "include", "pid", "window"])
@pytest.mark.parametrize("size", [1, 999, 100_000])
def test_chunks_make_the_whole_frame(files, which, kw, size):
    paths = files[:1] if which == "one" else files
    with rocpd.connect(*paths) as db:
        whole = db.kernels(**kw)
        chunks = list(db.kernels(chunksize=size, **kw)) if size > 1 or len(whole) < 1000 else None
    if chunks is None:  # one row a chunk: checked on the smaller selections only
        return
    if not len(whole):
        assert chunks == []
        return
    assert all(0 < len(c) <= size for c in chunks)
    got = pd.concat(chunks)
    if which == "two":  # the whole frame of several files has pandas' "string" for texts where
        # a one-file frame (and a chunk) has "str", and objects where a file had no row: the
        # same values
        pd.testing.assert_frame_equal(_texts(got), _texts(whole), check_dtype=False)
    else:
        pd.testing.assert_frame_equal(got, whole)


def _texts(df):
    return df.astype({c: object for c in df.columns if pd.api.types.is_string_dtype(df[c].dtype)})


def test_two_files_interleave_by_start(files):
    with rocpd.connect(*files) as db:
        chunks = list(db.kernels(chunksize=700))
    df = pd.concat(chunks)
    assert len(df) == 5000 and df["start"].is_monotonic_increasing
    assert df["pid"].iloc[:100].nunique() == 2  # both files from the first chunk on


def test_bad_chunksize_is_one_line(files):
    with rocpd.connect(files[0]) as db, pytest.raises(rocpd.RocpdError, match="chunksize"):
        next(iter(db.kernels(chunksize=0)))
