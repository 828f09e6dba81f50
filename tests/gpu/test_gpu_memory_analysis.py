"""GPU memory by Python line on a real GPU (rocprof run --memory-allocation-trace, rocpd memory):
the three programs of tests/gpu/programs plant a leak of 4 MiB per step (LEAK LINE), a 1 GiB
temporary (PEAK LINE) and an uncaught out-of-memory (OOM LINE); each prints the allocator's own
figures (torch.cuda.memory_stats(), ROCPROF_TORCH_STATS) at exit.

Checked: the leak's line is named with its growth per step within 5 %; the temporary's line is
the largest thing live at the peak; the crashed program's database is complete and `rocpd memory`
names the failing line and the request; our peak allocated and reserved agree with torch's
within 1 %.

    python -m pytest -q -s tests/gpu/test_gpu_memory_analysis.py

prints the figures (peaks, growth, the OOM) for RESULTS.md."""

import json
import subprocess
import sys

import pytest
from gpuutil import ROOT, env, query, rocprof_run

torch = pytest.importorskip("torch")
PROGRAMS = ROOT / "tests/gpu/programs"
MiB = 1 << 20


def _line_of(name: str, mark: str) -> str:
    """'memory_leak.py:42' for the line of ``name`` carrying the comment ``# mark``."""
    text = (PROGRAMS / name).read_text().splitlines()
    (n,) = [i + 1 for i, ln in enumerate(text) if ln.rstrip().endswith(f"# {mark}")]
    return f"{name}:{n}"


def _torch_stats(stdout: str) -> dict:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("ROCPROF_TORCH_STATS ")]
    assert lines, "the program printed no ROCPROF_TORCH_STATS line:\n" + stdout[-2000:]
    return json.loads(lines[-1].split(" ", 1)[1])


def _require_allocator_rows(db) -> None:
    """Fails with one clear line when the capture stored no caching-allocator rows."""
    assert db.exists(), f"no database at {db}"
    n = query(db, "SELECT COUNT(*) FROM rocpd_memory_allocate M JOIN rocpd_event E ON E.id ="
                  " M.event_id AND E.guid = M.guid JOIN rocpd_string S ON S.id = E.category_id"
                  " AND S.guid = E.guid WHERE S.string = 'TORCH_ALLOCATOR_BLOCK'")[0][0]
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata WHERE tag LIKE"
                          " 'rocprof.memory.%'"))
    assert n > 0, ("the database holds no TORCH_ALLOCATOR_BLOCK rows: the caching allocator's"
                   f" capture is missing or off (rocprof.memory.* metadata: {meta})")


def _run(tmp_path_factory, name, *args, check=True):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    tmp = tmp_path_factory.mktemp(name.removesuffix(".py"))
    db, p = rocprof_run(tmp, "--memory-allocation-trace", str(PROGRAMS / name), *args,
                        check=False)
    if check:
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return db, p


@pytest.fixture(scope="module")
def leak(tmp_path_factory):
    db, p = _run(tmp_path_factory, "memory_leak.py", "--steps", "24")
    return db, _torch_stats(p.stdout)


@pytest.fixture(scope="module")
def peak(tmp_path_factory):
    db, p = _run(tmp_path_factory, "memory_peak.py", "--steps", "8")
    return db, _torch_stats(p.stdout)


@pytest.fixture(scope="module")
def oom(tmp_path_factory):
    db, p = _run(tmp_path_factory, "memory_oom.py", check=False)
    assert p.returncode != 0, "the program was meant to die of torch.cuda.OutOfMemoryError"
    assert "OutOfMemoryError" in p.stderr, p.stderr[-3000:]
    return db, _torch_stats(p.stdout), p


def _agree(m, stats, label):
    """Our peak allocated and reserved on GPU 0 against torch's, within 1 %."""
    s = m.summary[m.summary["device"] == 0].iloc[0]
    ours = {"allocated": int(s["PeakAllocatedBytes"]), "reserved": int(s["PeakReservedBytes"])}
    theirs = {"allocated": stats["allocated_bytes.all.peak"],
              "reserved": stats["reserved_bytes.all.peak"]}
    print(json.dumps({"program": label, "ours": ours, "torch": theirs}))
    for k in ours:
        assert ours[k] == pytest.approx(theirs[k], rel=0.01), (label, k, ours, theirs)


def test_leak_line_named_with_its_growth_per_step(leak):
    import rocpd

    db, stats = leak
    _require_allocator_rows(db)
    m = rocpd.memory.analyze(str(db), step="step")
    want = _line_of("memory_leak.py", "LEAK LINE")
    print(m.leaks.to_string())
    assert len(m.leaks), f"no leak found; per step:\n{m.steps.to_string()}"
    top = m.leaks.iloc[0]
    assert str(top["line"]).endswith(want), (top["line"], want)
    assert top["GrowthBytesPerStep"] == pytest.approx(stats["leak_bytes_per_step"], rel=0.05)
    _agree(m, stats, "memory_leak.py")


def test_one_gib_temporary_is_named_as_the_peak(peak):
    import rocpd

    db, stats = peak
    _require_allocator_rows(db)
    m = rocpd.memory.analyze(str(db), step="step")
    want = _line_of("memory_peak.py", "PEAK LINE")
    at = m.peak[m.peak["device"] == 0]
    print(at.head(5).to_string())
    assert len(at), "nothing live at the peak"
    top = at.iloc[0]
    assert str(top["line"]).endswith(want), (top["line"], want)
    assert int(top["LiveBytes"]) >= stats["peak_temp_bytes"]
    _agree(m, stats, "memory_peak.py")
    frag = m.fragmentation[m.fragmentation["device"] == 0].iloc[0]
    assert 0 <= frag["LargestFreeBlockBytes"] <= frag["ReservedMinusAllocatedBytes"]


def test_out_of_memory_leaves_a_complete_database_naming_the_line(oom):
    import rocpd

    db, stats, _p = oom
    _require_allocator_rows(db)
    status = query(db, "SELECT value FROM rocpd_metadata WHERE tag = 'rocprof.status'")
    assert status and status[0][0] == "complete", status
    want = _line_of("memory_oom.py", "OOM LINE")
    m = rocpd.memory.analyze(str(db))
    print(m.oom.to_string())
    assert len(m.oom), "no TORCH_ALLOCATOR_OOM row"
    last = m.oom.iloc[-1]
    assert str(last["line"]).endswith(want), (last["line"], want)
    assert int(last["RequestBytes"]) == stats["chunk_bytes"]
    free = last["DeviceFreeBytes"]  # what the driver said was free: less than the request
    assert free is not None and free == free and 0 <= int(free) < stats["chunk_bytes"], free
    live = m.oom_live[m.oom_live["oom"] == last["oom"]]
    assert str(live.iloc[0]["line"]).endswith(want)
    assert int(live.iloc[0]["LiveBytes"]) == stats["chunk_bytes"] * stats["chunks"]
    p = subprocess.run([sys.executable, "-m", "rocpd", "memory", str(db)], capture_output=True,
                       text=True, env=env(), cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    print(p.stdout)
    assert "OUT OF MEMORY" in p.stdout and want in p.stdout
    assert f"a request of {stats['chunk_bytes'] / (1 << 30):.2f} GiB failed" in p.stdout
    assert "the driver had an unknown amount free" not in p.stdout
