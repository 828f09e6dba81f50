"""rocpd.diff with its processes swept (rocpd.diff.streamed: the ops read a chunk at a time,
the gaps a spilled piece at a time) against the held diff it stands in for at scale, on the
same real databases (rocprof's writer, diff_pairs): every table, the per-process steps, work,
phases and measures, the text and the median steps' ops must be equal, whatever the chunk size
(1 kernel: every kernel its own chunk; 7: chunks cut inside steps; whole), with and without steps,
under filters, over ranks and several runs per side."""

from __future__ import annotations

import json

import diff_pairs
import pandas as pd
import pytest

import rocpd
from rocpd.analysis import chunks
from rocpd.diff import streamed

TABLES = ["summary", "items", "lines", "kernels", "phases", "appeared", "ranks"]


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    d = tmp_path_factory.mktemp("diff_streamed")
    return {
        "slower": diff_pairs.pair(d, "slower", slow={"gemm_out": 1.3}, sync_after="gemm_out"),
        "pageable": diff_pairs.pair(d, "pageable", pageable=True, extra=True),
        "vendor": diff_pairs.pair(d, "vendor", vendor="amd", slow={"gemm_out": 1.3}),
        "ranks": (diff_pairs.ranks(d / "ra", seed=1),
                  diff_pairs.ranks(d / "rb", seed=2, slow_rank=2)),
        "runs": (diff_pairs.repeats(d / "ma", "a", [0, 30]),
                 diff_pairs.repeats(d / "mb", "b", [10, 40], after_s=100, slow={"gemm_out": 1.2})),
    }


def _chunks_of(monkeypatch, n: int) -> None:
    """Chunks of ``n`` kernels (GpuStream.frames reads chunks.CHUNK at each call)."""
    monkeypatch.setattr(chunks, "CHUNK", n)


def _frames(d):
    out = {name: getattr(d, name) for name in TABLES}
    if d.slowest is not None:
        out["slowest_items"] = d.slowest.items
    for side, procs in (("base", d._procs[0]), ("new", d._procs[1])):
        for i, ps in enumerate(procs):
            for attr in ("steps", "work", "phases", "measures", "waits"):
                out[f"{side}{i}.{attr}"] = getattr(ps, attr)
        step = d.median_step(side)
        if step is not None:
            # The chunks' columns that only copies fill (bytes, agents) are objects where the held
            # frame of kernels and copies made them floats: the values are compared.
            ops = step["ops"].reset_index(drop=True).astype(object)
            out[f"{side}.median_ops"] = ops.where(ops.notna(), None)
            out[f"{side}.median_waits"] = step["waits"]
    return out


def _same(a, b, **kw):
    held = rocpd.diff(a, b, stream_above=None, **kw)
    swept = rocpd.diff(a, b, stream_above=0, **kw)
    assert all(isinstance(ps.ops, streamed.Ops) for ps in swept._procs[0] + swept._procs[1])
    assert swept.text() == held.text() and swept.verdict() == held.verdict()
    assert swept.notes == held.notes
    h, s = _frames(held), _frames(swept)
    assert s.keys() == h.keys()
    for name, frame in h.items():
        if frame is None:
            assert s[name] is None, name
            continue
        pd.testing.assert_frame_equal(s[name], frame, obj=name)
    return held


CASES = [("slower", {}), ("slower", {"step": ""}), ("pageable", {}), ("vendor", {}),
         ("slower", {"include": "gemm"}), ("pageable", {"exclude": "gemm_out"}),
         ("slower", {"start": "20%", "end": "70%"}), ("pageable", {"skip_steps": 3}),
         ("ranks", {}), ("runs", {})]


# Chunks of 1 kernel cost a query and a frame each: one case only.
RUNS = [(c, k, n) for c, k in CASES for n in (7, 100_000)] + [("slower", {}, 1)]


@pytest.mark.parametrize("case,kw,chunk", RUNS, ids=[f"{c}-{json.dumps(k)}-{n}" for c, k, n in RUNS])
def test_swept_diff_is_the_held_one(pairs, monkeypatch, case, kw, chunk):
    _chunks_of(monkeypatch, chunk)
    held = _same(*pairs[case], **kw)
    assert len(held.items) and held.steps_base > (0 if kw.get("step") == "" else 1)


def test_the_whole_run_as_one_step(pairs, monkeypatch):
    """No steps: the one step's bounds come from the sweep itself, its idle charged as held."""
    _chunks_of(monkeypatch, 7)
    held = _same(*pairs["pageable"], step="")
    assert held.steps_base == 1 and (held.items["kind"] == "idle").any()
