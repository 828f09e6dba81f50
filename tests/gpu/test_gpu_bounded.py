"""A long run in bounded space on a real GPU (rocprof run --max-size, docs/long-runs.md):
2,000 PyTorch steps with three slow steps planted, each of another cause (a host sleep, extra
kernels, a pageable copy). The bounded database keeps those three whole and names them the
slowest with their causes, holds per-step times for all 2,000, and is at most 10 % of the full
trace's size. Prints sizes and the cost per kernel of both runs (the loop's time over an
unprofiled run's, per kernel) for RESULTS.md:

    python -m pytest -q -s tests/gpu/test_gpu_bounded.py"""

import json
import os

import pytest
from gpuutil import LIVE, REASON, ROOT, query, rocprof_run

torch = pytest.importorskip("torch")
STEPS = 2000
MAX_SIZE = "4MB"  # 2,000 summaries of 12-layer steps: ~1.2 kB each (H200 run 2)
WORKLOAD = str(ROOT / "tests/gpu/workloads/bounded_steps.py")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    if not LIVE:
        pytest.skip(f"CUPTI is not live: {REASON}")
    import subprocess
    import sys

    from gpuutil import env

    plain = subprocess.run([sys.executable, WORKLOAD, "--steps", str(STEPS)], capture_output=True,
                           text=True, env=env(), timeout=300)
    assert plain.returncode == 0, plain.stderr
    out = {"plain": (None, json.loads(plain.stdout.splitlines()[-1]), "")}
    for name, extra in (("full", ()), ("bounded", ("--max-size", MAX_SIZE))):
        tmp = tmp_path_factory.mktemp(name)
        db, p = rocprof_run(tmp, "--kernel-trace", "--memory-copy-trace", "--runtime-trace",
                            *extra, WORKLOAD, "--steps", str(STEPS))
        facts = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])
        out[name] = (str(db), facts, p.stderr)
    return out


def test_bounded_keeps_the_planted_steps_whole_and_every_summary(runs):
    db, facts, err = runs["bounded"]
    full_db = runs["full"][0]
    planted = facts["planted"]
    rows = query(db, "SELECT step, \"end\" - start, detail, coalesce(causes, ''), kernels, "
                     "start FROM rocprof_step_summary ORDER BY step")
    by_step = {r[0]: r for r in rows}
    slowest = sorted((r for r in rows if r[0] >= 3), key=lambda r: -r[1])[:3]
    size, full = os.path.getsize(db), os.path.getsize(full_db)
    (kernels_full,) = query(full_db, "SELECT count(*) FROM rocpd_kernel_dispatch")[0]
    loop_plain = runs["plain"][1]["loop_s"]
    loop_full, loop_bounded = runs["full"][1]["loop_s"], facts["loop_s"]
    meta = json.loads(query(db, "SELECT value FROM rocpd_metadata WHERE tag = "
                                "'rocprof.bounded'")[0][0])
    # per kernel: a typical step's time over the unprofiled run's, over its kernels
    (per_step,) = query(db, "SELECT kernels FROM rocprof_step_summary ORDER BY kernels LIMIT 1 "
                            "OFFSET 1000")[0]
    median = {k: runs[k][1]["step_ms_median"] for k in ("plain", "full", "bounded")}
    # the figures first: one GPU call must tell as much as it can, pass or fail
    print(json.dumps({
        "bytes": {"full": full, "bounded": size, "ratio": round(size / full, 4)},
        "kernels_full": kernels_full, "steps": STEPS, "summaries": len(rows),
        "loop_s": {"plain": loop_plain, "full": loop_full, "bounded": loop_bounded},
        "step_ms_median": median, "kernels_per_step": per_step,
        "cost_us_per_kernel": {k: 1e3 * (median[k] - median["plain"]) / per_step
                               for k in ("full", "bounded")},
        "cost_us_per_kernel_whole_loop": {"full": 1e6 * (loop_full - loop_plain) / kernels_full,
                                          "bounded": 1e6 * (loop_bounded - loop_plain)
                                          / kernels_full},
        "planted": planted,
        "planted_rows": {c: by_step.get(s) for c, s in planted.items()},
        "slowest": [(r[0], r[1] / 1e6, r[3]) for r in slowest],
        "bounded_meta": meta, "stderr_tail": err[-600:]}))
    assert [r[0] for r in rows] == list(range(STEPS))  # a summary for every step
    assert {r[0] for r in slowest} == set(planted.values()), (slowest, planted)
    want = {"host": "host time", "kernels": "extra kernels", "pageable": "pageable copy"}
    for cause, step in planted.items():
        r = by_step[step]
        assert r[2] == 1, r  # kept whole
        assert "slowest" in r[3] and want[cause] in r[3], (cause, r)
        nxt = by_step[step + 1][5]
        (kept,) = query(db, "SELECT count(*) FROM rocpd_kernel_dispatch WHERE start >= ? AND "
                            "start < ?", r[5], nxt)[0]
        assert kept == r[4], (cause, kept, r)
    # Every step names its top launch line: the planted step's 1,000 GEMMs' (`w @ w`).
    gemm_line = next(i for i, t in enumerate(open(WORKLOAD), 1) if t.strip() == "w @ w")
    top = query(db, "SELECT substr(E.call_stack, 2, length(E.call_stack) - 2) FROM "
                    "rocprof_step_lines L JOIN rocpd_event E ON E.id = L.site_id WHERE L.step = ? "
                    "ORDER BY L.kernel_ns DESC LIMIT 1", planted["kernels"])
    assert top and json.loads(top[0][0]).get("line") == gemm_line, top
    (with_lines,) = query(db, "SELECT count(DISTINCT step) FROM rocprof_step_lines")[0]
    assert with_lines >= 0.99 * STEPS, with_lines
    # ROCm's views read the kept records
    (n_view,) = query(db, "SELECT count(*) FROM kernels")[0]
    (n_table,) = query(db, "SELECT count(*) FROM rocpd_kernel_dispatch")[0]
    assert n_view == n_table > 0
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert size <= 0.10 * full, (size, full)
    assert size <= 4_000_000
    assert meta["records_late"] == 0, meta  # GPU records waited for, not summarised without
