"""rocpd.diff on generated pairs of runs (diff_pairs): each planted change is named first, with
its line and an interval that excludes zero; an unchanged pair shows no significant change."""

import hashlib
import os
import subprocess
import sys

import diff_pairs
import numpy as np
import pytest

import rocpd
import rocpd.diff
from rocpd.diff import names, phases

CASES = {
    "slower kernel": dict(slow={"gemm_out": 1.3}),
    "added sync": dict(sync_after="gemm_out"),
    "pageable copy": dict(pageable=True),
    "one more kernel": dict(extra=True),
    "unchanged": {},
    "other vendor": dict(vendor="amd", slow={"gemm_out": 1.3}),
}


@pytest.fixture(scope="module")
def diffs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairs")
    out = {}
    for case, planted in CASES.items():
        a, b = diff_pairs.pair(folder, case.replace(" ", "_"), **planted)
        out[case] = (a, b, rocpd.diff(a, b))
    return out


def _first(df):
    return df.iloc[0]


def _named_first(d, line, kind):
    """The first row of the changes and of the lines is ``line``, significant, its interval
    above zero; the verdict names it."""
    top = _first(d.items)
    assert (top["line"], top["kind"]) == (line, kind), d.items.head(3).to_string()
    assert bool(top["significant"]) and top["CiLowNs"] > 0 and top["DeltaNs"] > 0
    assert _first(d.lines)["line"] == line and bool(_first(d.lines)["significant"])
    assert f"first: {line} {kind}" in d.verdict()
    return top


def test_slower_kernel_is_named_first(diffs):
    d = diffs["slower kernel"][2]
    top = _named_first(d, "model.py:23", "kernel")
    assert top["name"].endswith("gemm_out") and top["verdict"] == "slower"
    # 250 µs made 30 % slower: +75 µs per step, the interval around it
    assert 70_000 < top["DeltaNs"] < 80_000 and top["CiLowNs"] < top["DeltaNs"] < top["CiHighNs"]
    assert top["DeltaPercent"] == pytest.approx(30, abs=2)
    assert len(d.significant) == 1 and not len(d.appeared)
    k = _first(d.kernels)
    assert k["name"].endswith("gemm_out") and k["lines"] == "model.py:23"
    assert _first(d.phases)["phase"] == "forward" and bool(_first(d.phases)["significant"])


def test_added_sync_is_named_first(diffs):
    d = diffs["added sync"][2]
    top = _named_first(d, "model.py:26", "sync")
    assert top["name"] == "cudaDeviceSynchronize" and top["status"] == "new"
    assert top["verdict"] == "new" and top["NewCount"] == 1 and top["BaseCount"] == 0
    app = _first(d.appeared)
    assert (app["what"], app["line"], app["name"]) == ("new sync", "model.py:26",
                                                       "cudaDeviceSynchronize")
    # the GPU idles from the sync's return to the next launch: the idle phase grew
    ph = d.phases.set_index("phase")
    assert bool(ph.loc["idle", "significant"]) and ph.loc["idle", "DeltaNs"] > 0


def test_pageable_copy_is_named_first(diffs):
    d = diffs["pageable copy"][2]
    top = _named_first(d, "train.py:38", "copy")
    assert top["name"] == "MEMORY_COPY_HOST_TO_DEVICE" and top["status"] == "both"
    assert top["note"].startswith("copy became pageable")
    assert (top["memory_base"], top["memory_new"]) == ("PINNED→DEVICE", "PAGEABLE→DEVICE")
    app = _first(d.appeared)
    assert (app["what"], app["line"]) == ("copy became pageable", "train.py:38")
    assert _first(d.phases)["phase"] == "data"


def test_one_more_kernel_is_named_first(diffs):
    d = diffs["one more kernel"][2]
    top = _named_first(d, "model.py:27", "kernel")
    assert top["name"] == "bias_add_kernel" and top["status"] == "new"
    assert 38_000 < top["DeltaNs"] < 42_000
    app = _first(d.appeared)
    assert (app["what"], app["line"], app["name"]) == ("new kernel", "model.py:27", "bias_add_kernel")


def test_unchanged_pair_reports_no_significant_change(diffs):
    d = diffs["unchanged"][2]
    assert d.verdict().startswith("no significant change:"), d.verdict()
    assert not d.changed
    for name in ("summary", "items", "lines", "kernels", "phases"):
        assert not getattr(d, name)["significant"].any(), name
        assert (getattr(d, name)["verdict"] != "slower").all()
    assert not len(d.appeared)
    # the same items on both sides, each within a few percent
    assert (d.items["status"] == "both").all()
    assert (d.items["DeltaPercent"].abs() < 2).all()


def test_another_vendor_is_matched_by_line(diffs):
    """An AMD run against an NVIDIA one: the GEMMs' names differ, their lines match."""
    d = diffs["other vendor"][2]
    top = _named_first(d, "model.py:23", "kernel")
    assert top["name_base"].startswith("sm90_xmma_gemm") and top["name_new"].startswith("Cijk_")
    assert " → " in top["name"]
    assert "first: model.py:23 kernel sm90_xmma" in d.verdict() and " → Cijk_" in d.verdict()
    assert (d.items["status"] == "both").all(), d.items[d.items["status"] != "both"].to_string()
    waits = d.items[d.items["kind"] == "sync"]
    assert list(waits["name"]) == ["cudaMemcpyAsync → hipMemcpyAsync"]  # one call by its API key


def test_intervals_are_reproducible_and_seeded(diffs):
    a, b, d = diffs["slower kernel"]
    again = rocpd.diff(a, b)
    for name in ("summary", "items", "lines", "kernels", "phases"):
        assert getattr(d, name).equals(getattr(again, name)), name
    other = rocpd.diff(a, b, seed=7)
    assert not np.allclose(other.items["CiLowNs"], d.items["CiLowNs"])
    assert other.items["DeltaNs"].equals(d.items["DeltaNs"])  # the estimate itself is not random


def test_databases_are_left_untouched(diffs, tmp_path):
    a, b, _ = diffs["added sync"]
    before = [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (a, b)]
    rocpd.diff(a, b)
    assert before == [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (a, b)]


def test_without_steps_there_is_no_interval(diffs):
    a, b, _ = diffs["slower kernel"]
    d = rocpd.diff(a, b, step="")
    assert d.steps_base == d.steps_new == 1
    assert d.items["CiLowNs"].isna().all() and not d.items["significant"].any()
    assert "too few steps" in d.verdict() and any("no confidence interval" in n for n in d.notes)
    assert _first(d.items)["line"] == "model.py:23"  # the change itself is still the largest


def test_a_change_spread_over_all_work_is_said(tmp_path):
    """Every kernel 4 % slower (as a lower clock makes them): with the defaults nothing counts
    (4 % < 5 %); at 3 % and 1 % of a step, no piece of work counts (each adds < 16 µs to a
    1.6 ms step) but the step time as a whole does, and the verdict says so."""
    every = {n: 1.04 for n, _, _ in diff_pairs.FORWARD + diff_pairs.BACKWARD}
    a, b = diff_pairs.pair(tmp_path, "clock", slow={**every, "adam_update": 1.04})
    d = rocpd.diff(a, b, min_change=0.05)
    assert not d.items["significant"].any() and not d.summary["significant"].any()
    assert d.verdict().startswith("no significant change")
    d = rocpd.diff(a, b, min_change=0.03, min_share=0.01)
    assert not d.items["significant"].any()
    assert d.summary.iloc[0]["significant"] and d.verdict().startswith("step time slower (+")
    assert "no single piece of work changed significantly" in d.verdict()


def test_skip_steps_and_thresholds(diffs):
    a, b, d = diffs["slower kernel"]
    skipped = rocpd.diff(a, b, skip_steps=5)
    assert skipped.steps_base == skipped.steps_new == 25
    strict = rocpd.diff(a, b, min_change=0.5)  # a 30 % change is below a 50 % threshold
    assert not strict.items["significant"].any()
    assert _first(strict.items)["verdict"] == "slower, below threshold"
    with pytest.raises(rocpd.RocpdError, match="confidence"):
        rocpd.diff(a, b, confidence=1.5)
    with pytest.raises(rocpd.RocpdError, match="skip_steps"):
        rocpd.diff(a, b, skip_steps=-1)
    with pytest.raises(rocpd.RocpdError, match="leaves no step .* at most 30"):
        rocpd.diff(a, b, skip_steps=30)


def test_rank_sets_per_rank_and_the_slowest_rank(tmp_path):
    """Synchronous data parallelism: rank 2's GEMM got slower and the others wait for it in the
    all-reduce. Over all ranks the wait is the largest change; per rank, rank 2 names the GEMM's
    line, and the slowest rank's diff names it first."""
    diff_pairs.ranks(tmp_path / "a", seed=1)
    diff_pairs.ranks(tmp_path / "b", seed=2, slow_rank=2)
    d = rocpd.diff(str(tmp_path / "a"), str(tmp_path / "b"))
    # The most compute per step first: the slow rank heads the table, and a cut table says so.
    assert d.ranks["rank"].iloc[0] == 2 and sorted(d.ranks["rank"]) == [0, 1, 2, 3]
    assert list(d.ranks["NewComputeNs"]) == sorted(d.ranks["NewComputeNs"], reverse=True)
    assert "\n... and 2 more (use --top 0)" in d.text(top=2)
    # Over all ranks the first change is the wait in the all-reduce: the verdict goes on to the
    # slow rank's own first change.
    v = d.verdict()
    assert "first: train.py:45 collective" in v, v
    assert "the ranks waiting in it for rank 2 (most compute per step), whose own first change " \
           "is model.py:23 kernel" in v, v
    assert d.ranks["significant"].all()  # every rank's step got slower
    by_rank = d.ranks.set_index("rank")
    assert by_rank.loc[2, "top_change"].startswith("model.py:23 kernel")
    assert all(by_rank.loc[r, "top_change"].startswith("train.py:45 collective") for r in (0, 1, 3))
    assert d.slowest_rank == 2 and d.slowest.scope == "rank 2"
    top = _first(d.slowest.items)
    assert top["line"] == "model.py:23" and top["CiLowNs"] > 0 and bool(top["significant"])
    assert "SLOWEST RANK OF THE NEW RUN: rank 2" in d.text()
    one = rocpd.diff(str(tmp_path / "a"), str(tmp_path / "b"), rank=2)  # the filter of every table
    assert _first(one.items)["line"] == "model.py:23" and one.slowest is None


def test_nothing_to_compare_is_one_line_error(tmp_path):
    """A run without GPU work is compared by its ranges and samples (test_diff_cpu); one with
    none of them, or GPU work on one side only, is a one-line error."""
    from rocpd.testing import DatabaseBuilder

    path = tmp_path / "empty.db"
    with DatabaseBuilder(path, gpus=0) as bld:
        bld.metadata("rocprof.note", "nothing recorded")
    with pytest.raises(rocpd.RocpdError, match="no GPU work, ROCTx range or call-stack sample"):
        rocpd.diff(str(path), str(path))
    ranges = tmp_path / "ranges.db"
    with DatabaseBuilder(ranges, gpus=0) as bld:
        for i in range(3):
            bld.marker("step", 10 + 20 * i, 20 + 20 * i)
    gpu = diff_pairs.run(tmp_path / "gpu.db", steps=3)
    with pytest.raises(rocpd.RocpdError, match="did GPU work and A .baseline. none"):
        rocpd.diff(str(ranges), str(gpu))


def test_rocpd_diff_is_the_function_and_the_package():
    from rocpd.diff import Diff, diff

    assert callable(rocpd.diff) and rocpd.diff.diff is diff and rocpd.diff.Diff is Diff


def test_bare_import_gives_rocpd_diff_and_no_higher_layer(diffs):
    """``import rocpd; rocpd.diff(a, b)`` works, and the diff loads neither the report nor the
    command line (it sits below both)."""
    a, b, _ = diffs["unchanged"]
    root = os.path.dirname(os.path.dirname(rocpd.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    code = (f"import sys, rocpd\nprint(rocpd.diff({a!r}, {b!r}).verdict()[:21])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('rocpd.report', 'rocpd.cli'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["no significant change", "[]"]


def test_kernel_and_api_keys():
    k = names.kernel_key
    assert k("void at::native::vectorized_elementwise_kernel<4, F>(int, float*)") == \
        "at::native::vectorized_elementwise_kernel<#, F>"
    assert k("sm80_gemm_tilesize128x128") == k("sm80_gemm_tilesize64x64")
    assert k("relu_kernel") != k("gelu_kernel")
    assert names.api_key("hipDeviceSynchronize") == names.api_key("cudaDeviceSynchronize")
    assert names.api_key("cudaMemcpyAsync_ptsz") == names.api_key("hipMemcpyAsync") == "MemcpyAsync"


def test_lines_of_two_checkouts_match():
    a, b = names.line_labels({"/home/a/proj/train.py:3", "/home/a/proj/lib/net.py:9"},
                             {"/scratch/b/proj/train.py:3", "/scratch/b/proj/lib/net.py:9"})
    assert sorted(a.values()) == sorted(b.values()) == ["lib/net.py:9", "train.py:3"]
    # one run's files in a deeper folder: matched by file name and line where unambiguous
    a, b = names.line_labels({"/x/train.py:3"}, {"/y/src/train.py:3", "/y/src/util.py:1"})
    assert a["/x/train.py:3"] == b["/y/src/train.py:3"]


def test_phase_names():
    assert phases.range_phase("forward") == "forward" and phases.range_phase("bwd_pass") == "backward"
    assert phases.range_phase("optimizer.step") == "optimizer"
    assert phases.range_phase("data_loading") == "data" and phases.range_phase("train_step") is None
    assert phases.kernel_phase("multi_tensor_apply_kernel<AdamFunctor>") == "optimizer"
    assert phases.kernel_phase("gemm_dgrad") == "backward" and phases.kernel_phase("gemm") is None


def test_a_process_without_steps_is_left_out_and_said(diffs, tmp_path):
    """A helper process with GPU work but no step range (its whole run would otherwise be
    averaged with the other processes' first step)."""
    from rocpd.testing import DatabaseBuilder

    a, b, _ = diffs["slower kernel"]
    helper = tmp_path / "helper.db"
    with DatabaseBuilder(helper, pid=4242) as bld:
        bld.kernel("warmup_kernel", 10_000, 90_000_000)
    d = rocpd.diff([a, str(helper)], b)
    assert any("pid 4242 has GPU work but no 'train_step' step: left out" in n for n in d.notes)
    assert _first(d.items)["line"] == "model.py:23" and "warmup" not in " ".join(d.items["name"])
