"""The analysis's GPU work read as columns (rocpd.analysis.gpuload) against the generic reader it
replaced: the union of kernels and copies read row by row (activity._frame over
activity._GPU_SQL) and prepared as it was, per process. Both run on the same databases, written
by the real writer (two processes in two files, steps, NCCL, copies both ways with their memory
kinds, a set, syncs, Python lines, a kernel whose symbol row is missing), under the shared
filters; every table of the analysis, the findings and the processes' frames must be equal
(texts compared as objects: the new frames keep them so)."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest
from analysis_patterns import NCCL, copy, launch, ns, sync

import rocpd
from rocpd import _schema
from rocpd.analysis import SECTIONS, activity, analyze, gpuprep
from rocpd.analysis import sites as sites_mod
from rocpd.testing import DatabaseBuilder


def _reference_gpu_frame(conn, where, params, guid, line_info):
    """The generic reader: the union, every cell as SQLite gives it, then this part's rows."""
    sql = activity._GPU_SQL.format(where=where, line_info=line_info)
    full = activity._frame(conn, sql, params)
    return full[full["guid"] == guid] if len(full) else full


def _reference_sites(series):
    uniq = pd.unique(series.fillna("{}"))
    parsed = {u: sites_mod._parse_site(u) for u in uniq}
    filled = series.fillna("{}")
    return (filled.map(lambda u: parsed[u][0]).astype(object),
            filled.map(lambda u: parsed[u][1]).astype(object))


def _reference_prepare(gpu, comm_re):
    """The preparation as it was: a copy, a Python call per row for the memory kinds and lines,
    and a stable sort."""
    gpu = gpu.copy()
    for c in ("start", "end", "tid", "agent", "stream"):
        gpu[c] = gpu[c].fillna(0).astype("int64")
    gpu["corr"] = gpu["corr"].fillna(0).astype("int64")
    names = gpu["name"].astype(object)
    is_copy = (gpu["op"] == "copy").to_numpy()
    uniq = gpuprep.pd_unique(names)
    comm = names.map({n: bool(comm_re.search(str(n))) for n in uniq}).to_numpy(dtype=bool)
    gpu["kind"] = np.where(is_copy, "memory", np.where(comm, "comm", "compute"))
    direction = {n: gpuprep._direction(str(n)) for n in uniq}
    gpu["direction"] = np.where(is_copy, names.map(direction).to_numpy(dtype=object), "")
    ext = gpu["extdata"].fillna("{}")
    mem = {u: gpuprep._memory_kinds(u) for u in ext.unique()}
    gpu["src_memory"] = ext.map(lambda u: mem[u][0])
    gpu["dst_memory"] = ext.map(lambda u: mem[u][1])
    gpu["site"], gpu["function"] = _reference_sites(gpu["line_info"])
    gpu["duration"] = gpu["end"] - gpu["start"]
    gpu = gpu.drop(columns=["extdata", "line_info"])
    return gpu.sort_values("start", kind="stable", ignore_index=True)


def _training(path, pid, seed, shuffle=False):
    """Steps of launches from three lines, a collective, copies both ways, a set, a sync and a
    .item(); ``shuffle``: kernels written out of time order (the sort must make them so)."""
    rng = random.Random(seed)
    with DatabaseBuilder(path, pid=pid) as b:
        b.thread(pid + 1, "loader")
        for s in range(6):
            at = 3000.0 * s
            b.marker(f"train_step {s}", ns(at), ns(at + 2800))
            b.marker("forward", ns(at), ns(at + 900))
            launches = []
            for i in range(12):
                g = at + 50 + i * 60 + rng.randrange(0, 20)
                launches.append((f"gemm_{i % 4}", at + 10 + i * 40, 5, g, rng.randrange(5, 55),
                                 ("/w/model.py", 10 + i % 3, "forward")))
            if shuffle:
                rng.shuffle(launches)
            for name, a, d, g, dur, site in launches:
                launch(b, name, a, d, g, dur, site=site)
            launch(b, NCCL, at + 900, 5, at + 950, 300, stream=1, site=("/w/train.py", 40, "step"))
            copy(b, "H2D", at + 1300, 5, at + 1320, 30, size=4096, site=("/w/train.py", 30, "step"),
                 src_memory="PAGEABLE", dst_memory="DEVICE")
            copy(b, "D2H", at + 1400, 60, at + 1420, 4, size=4, site=("/w/train.py", 44, "step"))
            b.memory_copy("MEMORY_SET", ns(at + 1500), ns(at + 1510), 64, memset=True)
            sync(b, at + 1600, 40, site=("/w/train.py", 45, "step"))
            launch(b, "relu", at + 1700, 5, at + 1800, 12, tid=pid + 1)
            b.kernel("no_launch_call", ns(at + 2000), ns(at + 2010))
            b.marker("load", ns(at + 2100), ns(at + 2600), tid=pid + 1)
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded_load")
    a = _training(d / "rank0.db", 4000, 1)
    b = _training(d / "rank1.db", 4100, 2, shuffle=True)
    return a, b


def _tables(db, **kw):
    a = analyze(db, **kw)
    out = {name: a.table(name) for name, attr, _ in SECTIONS if attr}
    out["gaps"] = pd.concat(a.gaps, ignore_index=True) if a.gaps else pd.DataFrame()
    findings = [f.text() for f in a.findings()]
    frames = [(p.gpu, p.api, p.ranges) for p in a.processes]
    return out, findings, frames


def _objects(df):
    """Text columns as objects, a missing text as None: the columns reader keeps texts as object
    columns sharing their strings (pandas' str dtype copies every cell, and gave NaN for a
    missing one); the values must be the same."""
    df = df.astype({c: object for c in df.columns
                    if pd.api.types.is_string_dtype(df[c].dtype) and df[c].dtype != object})
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].where(df[c].notna(), None)
    return df


def _same(new, old, obj="frame"):
    pd.testing.assert_frame_equal(_objects(new), _objects(old), obj=obj)


FILTERS = [{}, {"step": ""}, {"include": "gemm"}, {"exclude": "gemm_1"}, {"pid": 4100},
           {"start": "10%", "end": "70%"}]


@pytest.mark.parametrize("kw", FILTERS, ids=[json.dumps(f) for f in FILTERS])
def test_columns_reader_gives_the_generic_readers_analysis(runs, monkeypatch, kw):
    with rocpd.connect(*runs) as db:
        new_tables, new_findings, new_frames = _tables(db, **kw)
    assert any(len(g) for g, _, _ in new_frames), "the databases hold GPU work"
    monkeypatch.setattr(activity, "gpu_frame", _reference_gpu_frame)
    monkeypatch.setattr(activity, "_prepare_gpu", _reference_prepare)
    with rocpd.connect(*runs) as db:
        old_tables, old_findings, old_frames = _tables(db, **kw)
    assert new_findings == old_findings
    assert new_tables.keys() == old_tables.keys()
    for name, table in new_tables.items():
        _same(table, old_tables[name], obj=name)
    assert len(new_frames) == len(old_frames)
    for new, old in zip(new_frames, old_frames, strict=True):
        for n, o in zip(new, old, strict=True):
            _same(n, o)


def test_merged_file_of_two_processes(runs, tmp_path, monkeypatch):
    """One file holding both processes (rocpd merge): each part read by its guid."""
    from rocpd.io.merge import merge_files

    merged = merge_files(list(runs), str(tmp_path / "merged.db"))
    with rocpd.connect(merged) as db:
        assert len(db.sources()[0].parts) == 2
        new_tables, new_findings, new_frames = _tables(db)
    monkeypatch.setattr(activity, "gpu_frame", _reference_gpu_frame)
    monkeypatch.setattr(activity, "_prepare_gpu", _reference_prepare)
    with rocpd.connect(merged) as db:
        old_tables, old_findings, old_frames = _tables(db)
    assert new_findings == old_findings and len(new_frames) == len(old_frames) == 2
    for name, table in new_tables.items():
        _same(table, old_tables[name], obj=name)
    for new, old in zip(new_frames, old_frames, strict=True):
        for n, o in zip(new, old, strict=True):
            _same(n, o)


def test_missing_symbol_reads_as_unknown(tmp_path):
    """A dispatch whose symbol row is gone reads as '(unknown)', as the union's LEFT JOIN gave."""
    import sqlite3

    path = _training(tmp_path / "one.db", 4200, 3)
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                        " AND name LIKE 'rocpd_info_kernel_symbol%'")]
    con.execute(f'DELETE FROM "{tables[0]}" WHERE display_name = ? OR kernel_name = ?',
                ("relu", "relu"))
    con.commit()
    con.close()
    with rocpd.connect(path) as db:
        src = db.sources()[0]
        guid = src.parts[0].guid
        new = activity.gpu_frame(src.conn, "1", [], guid, _schema.line_info_sql("E"))
        old = _reference_gpu_frame(src.conn, "1", [], guid, _schema.line_info_sql("E"))
    assert (new["name"] == "(unknown)").sum() == 6
    _same(new.reset_index(drop=True), old.reset_index(drop=True))
