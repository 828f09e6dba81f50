"""The streamed analysis (rocpd.analysis.streamed: a process's kernels swept a chunk at a time,
its gaps spilled to disk) against the in-memory one it stands in for at scale, on the same real
databases (rocprof's writer): every table, the waits, the gap and blocking-call rows and the
findings' text must be equal, dtypes included, whatever the chunk size (1 kernel: every op its
own chunk; 7: chunks cut inside steps; whole), under the shared filters and a given step."""

from __future__ import annotations

import json

import host_patterns as H
import pandas as pd
import pytest
from test_bounded_load import _objects, _training

import rocpd
from rocpd.analysis import SECTIONS, analyze, chunks
from rocpd.analysis.spill import SpilledGaps, pieces_of


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("streamed")
    return (_training(d / "rank0.db", 4000, 1), _training(d / "rank1.db", 4100, 2, shuffle=True))


def _everything(paths, **kw):
    with rocpd.connect(*paths) as db:
        a = analyze(db, **kw)
        out = {name: a.table(name) for name, attr, _ in SECTIONS if attr}
        out["waits"] = a.waits
        gaps = [g for gg in a.gaps for g in pieces_of(gg)]
        out["gaps"] = pd.concat(gaps, ignore_index=True) if gaps else pd.DataFrame()
        out["blocking"] = pd.concat(a.blocking, ignore_index=True)
        return a, out, [f.text() for f in a.findings()]


def _same_analysis(paths, **kw):
    _, held, held_findings = _everything(paths, **kw)
    a, swept, swept_findings = _everything(paths, stream_above=0, **kw)
    assert all(p.stream is not None for p in a.processes), "every process swept"
    assert all(isinstance(g, SpilledGaps) for g in a.gaps)
    assert swept_findings == held_findings
    assert swept.keys() == held.keys()
    for name, table in held.items():
        pd.testing.assert_frame_equal(_objects(swept[name]).reset_index(drop=True),
                                      _objects(table).reset_index(drop=True), obj=name)
    return held, held_findings


FILTERS = [{}, {"step": ""}, {"step": "forward"}, {"include": "gemm"}, {"exclude": "gemm_1"},
           {"pid": 4100}, {"start": "10%", "end": "70%"}]


@pytest.mark.parametrize("chunk", [1, 7, 100_000])
@pytest.mark.parametrize("kw", FILTERS, ids=[json.dumps(f) for f in FILTERS])
def test_swept_analysis_is_the_held_one(runs, monkeypatch, kw, chunk):
    monkeypatch.setattr(chunks, "CHUNK", chunk)
    held, _ = _same_analysis(runs, **kw)
    assert len(held["gaps"]) and len(held["launch"]), "the databases hold GPU work and gaps"


PATTERNS = [(H.slow_loader, {"api": True, "samples": True}), (H.slow_loader, {"api": False}),
            (H.sync_in_step, {"api": True}), (H.startup, {"api": True})]


@pytest.mark.parametrize("pattern,kw", PATTERNS,
                         ids=[f"{p.__name__}-{json.dumps(k)}" for p, k in PATTERNS])
def test_swept_findings_of_host_patterns(tmp_path, monkeypatch, pattern, kw):
    """Host work named from samples and ranges, syncs charged, start-up apart: the findings
    that read the gaps a piece at a time say what they say from the whole frame."""
    monkeypatch.setattr(chunks, "CHUNK", 5)
    path = pattern(str(tmp_path / "p.db"), **kw)
    _, findings = _same_analysis([path])
    assert findings


def test_a_mixed_analysis_keeps_the_tables_order(runs, monkeypatch):
    """One process swept, the other held (over the threshold or not): tables across both."""
    monkeypatch.setattr(chunks, "CHUNK", 7)
    _, held, held_findings = _everything(runs)
    with rocpd.connect(*runs) as db:
        sizes = [chunks.stored_kernels(s.conn, p.guid) for s in db.sources() for p in s.parts]
    a, mixed, mixed_findings = _everything(runs, stream_above=min(sizes))
    assert sum(p.stream is not None for p in a.processes) == 1 or len(set(sizes)) == 1
    assert mixed_findings == held_findings
    for name, table in held.items():
        pd.testing.assert_frame_equal(_objects(mixed[name]).reset_index(drop=True),
                                      _objects(table).reset_index(drop=True), obj=name)


def test_without_an_index_on_start(runs, tmp_path, monkeypatch):
    """Another writer's database without the index on start: one sorted query read in chunks,
    the same analysis (the copy's index dropped, the run's own file untouched)."""
    import shutil
    import sqlite3

    paths = []
    for i, src in enumerate(runs):
        dst = tmp_path / f"noindex{i}.db"
        shutil.copy(src, dst)
        con = sqlite3.connect(dst)
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                                           " AND name LIKE 'rocpd_kernel_dispatch_start%'")]
        assert names, "the writer indexes the kernels' start"
        for n in names:
            con.execute(f'DROP INDEX "{n}"')
        con.commit()
        con.close()
        paths.append(str(dst))
    monkeypatch.setattr(chunks, "CHUNK", 7)
    seen = []
    sorted_ = chunks.GpuStream._sorted
    monkeypatch.setattr(chunks.GpuStream, "_sorted",
                        lambda self, *a: seen.append(1) or sorted_(self, *a))
    _same_analysis(paths)
    assert seen, "the sorted query read the kernels"
