"""rocpd ranks reading each rank's kernels a rowid range at a time (rocpd.ranks.core._CHUNK)
against the whole-table read it replaced (the function below, as it was), on real databases
(rocprof's writer): the facts of every part and the report's tables must be equal, whatever the
range (1 kernel, 7, all), with steps detected or named, kernels outside every step, no steps."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import rocpd
from rocpd import ranks
from rocpd.ranks import core
from rocpd.testing import DatabaseBuilder, build_ranks


def _held_facts(src, step_family, collective_regex):
    """core.file_facts before the ranges: every kernel of a part read at once."""
    coll = re.compile(collective_regex, re.I)
    steps: dict = {}
    if step_family is not None:
        for g, _, s, e, name in core._ranges(src):
            if name and core.family(name) == step_family:
                steps.setdefault(g, []).append((s, e))
    out = []
    for p in src.parts:
        summarised = core._summarised(src, p, step_family, coll)
        if summarised is not None:
            out.append(summarised)
            continue
        st = sorted(steps.get(p.guid, []))
        fact = {"guid": p.guid, "steps": st, "compute": [0] * len(st), "collective": [0] * len(st),
                "kernels": [0] * len(st), "by_name": {}, "total_compute": 0, "total_collective": 0}
        out.append(fact)
        table = src.table(p, "kernel_dispatch")
        if table is None:
            continue
        k, s, e = core._kernels(src, table)
        if not len(k):
            continue
        sym = src.table(p, "info_kernel_symbol")
        names = {} if sym is None else dict(src.conn.execute(
            f"SELECT id, COALESCE(display_name, kernel_name) FROM {sym}"))
        d = e - s
        uniq, inv = np.unique(k, return_inverse=True)
        tot = np.bincount(inv, minlength=len(uniq))
        dur = np.zeros(len(uniq), np.int64)
        np.add.at(dur, inv, d)
        is_coll = np.array([bool(coll.search(names.get(int(x)) or "")) for x in uniq.tolist()])
        fact["total_collective"] = int(dur[is_coll].sum())
        fact["total_compute"] = int(dur[~is_coll].sum())
        for x, n, t in zip(uniq.tolist(), tot.tolist(), dur.tolist(), strict=True):
            name = names.get(x) or f"(kernel id {x})"
            c = fact["by_name"].setdefault(name, [0, 0])
            c[0] += n
            c[1] += t
        if st:
            starts = np.array([a for a, _ in st], np.int64)
            period = int(np.median(np.diff(starts))) if len(st) > 1 else st[0][1] - st[0][0]
            edges = np.append(starts, max(st[-1][1], starts[-1] + period))
            idx = np.searchsorted(edges, s, side="right") - 1
            inside = (idx >= 0) & (idx < len(st))
            kc = is_coll[inv]
            for key, mask in (("collective", inside & kc), ("compute", inside & ~kc)):
                out_ = np.zeros(len(st), np.int64)
                np.add.at(out_, idx[mask], d[mask])
                fact[key] = out_.tolist()
            fact["kernels"] = np.bincount(idx[inside], minlength=len(st)).tolist()
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    d = tmp_path_factory.mktemp("ranks_chunked")
    build_ranks(d / "run", ranks=4, steps=5, straggler=2, seed=3)
    (d / "odd").mkdir()
    # Kernels before the first step, between steps and after the last (and a name of one rank
    # only), and a rank without any step.
    for r in range(2):
        with DatabaseBuilder(d / "odd" / f"r{r}.db", rank=r) as b:
            b.kernel("warmup", 10, 5_000)
            for i in range(3 if r == 0 else 0):
                s = 100_000 + i * 1_000_000
                b.marker(f"step {i}", s, s + 700_000)
                b.kernel("gemm", s + 2_000, s + 300_000 + 1000 * r)
                b.kernel("ncclKernel_AllReduce", s + 400_000, s + 650_000)
                b.kernel(f"rank{r}_only", s + 800_000, s + 900_000)
            b.kernel("gemm", 9_000_000, 9_100_000)
    return d / "run", d / "odd"


def _tables(rep):
    return {k: getattr(rep, k) for k in ("steps", "per_rank", "slowest", "kernel_skew")}


@pytest.mark.parametrize("chunk", [1, 7, 1_000_000])
@pytest.mark.parametrize("which,name", [(0, None), (0, "forward"), (1, None), (1, "step 0")])
def test_ranged_facts_are_the_whole_reads(folders, monkeypatch, chunk, which, name):
    monkeypatch.setattr(core, "_CHUNK", chunk)
    with rocpd.connect(folders[which]) as db:
        fam = core.family(name) if name else core.choose_step(
            [i for f in db.map(core.file_identity) for i in f])
        got = [f for found in db.map(core.file_facts, fam, core.COLLECTIVE_REGEX) for f in found]
        held = [f for found in db.map(_held_facts, fam, core.COLLECTIVE_REGEX) for f in found]
        assert got == held
        assert any(f["by_name"] for f in held) and any(f["steps"] for f in held)
        rep = ranks.analyze(db, name)
    monkeypatch.setattr(core, "file_facts", _held_facts)
    with rocpd.connect(folders[which]) as db:
        old = ranks.analyze(db, name)
    for key, frame in _tables(old).items():
        pd.testing.assert_frame_equal(_tables(rep)[key], frame, obj=key)
    assert rep.headline() == old.headline() and rep.notes == old.notes
