"""The AMD backend (cpp/capture/hsa/) through its real entry points, on the TEST-ONLY software
HSA runtime and HIP stand-in of tests/amd_standin (no AMD GPU exists here): the stand-in loads
HSA_TOOLS_LIB and calls OnLoad with an HsaApiTable built from the real ROCm headers, and runs
dispatches and copies on CPU threads with known durations. What passes here has still not run
on AMD hardware (rocprof info and the database say so)."""

from __future__ import annotations

import csv
import itertools
import json
import os

import pytest
import support

N = 6  # launches of each kernel
DURATIONS = {"vector_add(float*, float const*, float const*, int)": 200_000,
             "reduce_sum(float const*, float*, int)": 500_000}
COPIES = {"MEMORY_COPY_HOST_TO_DEVICE": 1 << 20, "MEMORY_COPY_DEVICE_TO_HOST": 256 << 10}


def _sdk_state() -> str:
    """How `rocprof info` starts its rocprofiler_sdk item in this build (its PC-sampling backend
    is built where rocprofiler-sdk headers were found: test_amd_pc_sampling.py)."""
    from rocprof import _core

    built = any(name == "rocprofiler-sdk-pc-sampling" and compiled
                for name, compiled, _live, _why in _core.backends())
    return "compiled (PC sampling, headers in" if built else "not compiled: headers absent"


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """Builds the stand-in runtimes and the HIP-like program; skips, saying why, where it can't."""
    return support.build_amd_standin(tmp_path_factory.mktemp("amd_standin"))


def _run(standin, tmp_path, *options, env=None, program=None):
    out = tmp_path / "out"
    r = support.run_rocprof("run", "-d", out, *options, "--",
                            *(program or [standin["app"], str(N)]),
                            env={**standin["env"], **(env or {})}, timeout=180)
    assert r.returncode == 0, r.stderr
    dbs = sorted(out.rglob("*_results.db"))
    assert len(dbs) == 1, (dbs, r.stderr)
    return r, support.open_db(dbs[0]), out


def _metadata(db) -> dict:
    return dict(db.execute("SELECT tag, value FROM rocpd_metadata"))


@pytest.fixture(scope="module")
def traced(standin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traced")
    r, db, out = _run(standin, tmp, "--kernel-trace", "--hsa-trace", "--hip-trace",
                      "--memory-copy-trace", "--memory-allocation-trace", "--stats")
    yield r, db, out
    db.close()


def test_kernel_stats_match_the_standin_durations(traced):
    _, _, out = traced
    [stats] = out.rglob("*_kernel_stats.csv")
    rows = {row["Name"]: row for row in csv.DictReader(stats.open())}
    assert set(rows) == set(DURATIONS)
    for name, ns in DURATIONS.items():
        assert int(rows[name]["Calls"]) == N
        assert int(rows[name]["TotalDurationNs"]) == N * ns
        assert int(rows[name]["MinNs"]) == int(rows[name]["MaxNs"]) == ns


def test_dispatches_names_order_queues_and_geometry(traced):
    _, db, _ = traced
    rows = db.execute(
        "SELECT k.dispatch_id, ks.display_name, ks.kernel_name, k.queue_id, k.start, k.end, "
        "k.grid_size_x, k.grid_size_y, k.workgroup_size_x, k.workgroup_size_y, "
        "k.group_segment_size, k.agent_id FROM rocpd_kernel_dispatch k "
        "JOIN rocpd_info_kernel_symbol ks ON ks.id = k.kernel_id ORDER BY k.dispatch_id").fetchall()
    assert len(rows) == 2 * N
    # Launched alternately, one kernel per stream: dispatch ids follow the launch order.
    assert [r[1] for r in rows] == [*DURATIONS] * N
    assert [r[0] for r in rows] == sorted({r[0] for r in rows})
    assert {r[2] for r in rows} == {"_Z10vector_addPfPKfS1_i", "_Z10reduce_sumPKfPfi"}  # ".kd" cut
    queues = {name: {r[3] for r in rows if r[1] == name} for name in DURATIONS}
    assert all(len(q) == 1 for q in queues.values()) and len(set.union(*queues.values())) == 2
    for name in DURATIONS:  # one queue runs its dispatches one after another
        mine = [r for r in rows if r[1] == name]
        assert all(a[5] <= b[4] for a, b in itertools.pairwise(mine))
    add, reduce = rows[0], rows[1]
    assert add[6:10] == (1024 * 256, 1, 256, 1)
    assert reduce[6:11] == (64 * 128, 2 * 2, 128, 2, 4096 + 1024)
    [gpu] = db.execute("SELECT id, type, name, product_name, extdata FROM rocpd_info_agent "
                       "WHERE type = 'GPU'").fetchall()
    assert {r[11] for r in rows} == {gpu[0]}
    assert gpu[2:4] == ("gfx90a", "rocprof software stand-in GPU (test only)")
    assert json.loads(gpu[4])["compute_units"] == 104
    names = {row[0] for row in db.execute("SELECT name FROM rocpd_info_queue")}
    assert names == {"HSA queue 1", "HSA queue 2"}


def test_copies_allocations_and_roctx_ranges(traced):
    _, db, _ = traced
    copies = dict(db.execute("SELECT s.string, c.end - c.start FROM rocpd_memory_copy c "
                             "JOIN rocpd_string s ON s.id = c.name_id"))
    assert copies == COPIES  # 1 ns per byte on the stand-in's copy engine
    sizes = db.execute("SELECT size FROM rocpd_memory_copy ORDER BY start").fetchall()
    assert sizes == [(1 << 20,), (256 << 10,)]
    allocs = db.execute("SELECT type, size FROM rocpd_memory_allocate ORDER BY start").fetchall()
    assert allocs == [("ALLOC", 1 << 20), ("ALLOC", 256 << 10), ("FREE", 1 << 20),
                      ("FREE", 256 << 10)]
    # The innermost ROCTx range at each launch.
    ranges = db.execute("SELECT DISTINCT roctx_range FROM kernels").fetchall()
    assert ranges == [("compute",)]
    ranges = db.execute("SELECT DISTINCT roctx_range FROM memory_copies").fetchall()
    assert ranges == [("transfer",)]
    # As rocprofv3 (without --kernel-rename): the region name of a dispatch is its kernel's.
    assert db.execute("SELECT count(*) FROM kernels WHERE region IS NULL OR region != name"
                      ).fetchone()[0] == 0


def test_api_calls_correlate_with_their_gpu_work(traced):
    _, db, _ = traced
    api = db.execute("SELECT category, name, corr_id, tid FROM regions").fetchall()
    count = {}
    for category, name, _corr, _tid in api:
        count[(category, name)] = count.get((category, name), 0) + 1
    assert count[("HIP_RUNTIME_API_EXT", "hipModuleLaunchKernel")] == 2 * N
    assert count[("HIP_RUNTIME_API_EXT", "hipMemcpyAsync")] == 2
    assert count[("HIP_RUNTIME_API_EXT", "hipMalloc")] == 2
    assert count[("HSA_CORE_API", "hsa_queue_create")] == 2
    assert count[("HSA_AMD_EXT_API", "hsa_amd_memory_async_copy")] == 2
    assert count[("HSA_CORE_API", "hsa_signal_store_screlease")] >= 2 * N  # doorbells
    launches = {corr: tid for cat, name, corr, tid in api if name == "hipModuleLaunchKernel"}
    dispatches = db.execute("SELECT e.correlation_id, k.tid FROM rocpd_kernel_dispatch k "
                            "JOIN rocpd_event e ON e.id = k.event_id").fetchall()
    assert {corr for corr, _ in dispatches} == set(launches)  # one launch, one dispatch
    assert all(launches[corr] == tid for corr, tid in dispatches)
    memcpys = {corr for cat, name, corr, _ in api if name == "hipMemcpyAsync"}
    copy_corr = {c for (c,) in db.execute("SELECT e.correlation_id FROM rocpd_memory_copy m "
                                          "JOIN rocpd_event e ON e.id = m.event_id")}
    assert copy_corr == memcpys


def test_rocm_views_and_metadata_say_what_ran(traced):
    _, db, _ = traced
    assert db.execute("SELECT count(*) FROM kernels").fetchone()[0] == 2 * N
    top = dict(db.execute("SELECT name, total_calls FROM top_kernels"))
    assert top == {name: N for name in DURATIONS}
    # ROCm's own view SQL sees every dispatch, copy, allocation and API region we stored.
    from rocm_views import compare, mismatches

    [path] = traced[2].rglob("*_results.db")
    assert compare(path)["kernels"][1][0] == 2 * N and mismatches(path) == {}
    meta = _metadata(db)
    assert meta["rocprof.hsa.status"] == "on"
    assert "not yet run on AMD hardware" in meta["rocprof.hsa.hardware"]
    assert f"rocprofiler_sdk: {_sdk_state()}" in meta["rocprof.hsa.compiled"]
    assert meta["rocprof.hsa.active"].split(",") == [
        "hsa_tools", "kernel_trace", "memory_copy_trace", "memory_allocation_trace", "hsa_trace",
        "hip_trace"]
    assert meta["rocprof.hsa.dispatches"] == str(2 * N)
    assert meta["rocprof.hsa.runtime_library"].endswith("librocprof_standin_hsa.so")


def test_unknown_table_layout_is_refused_in_one_line(standin, tmp_path):
    """ROCm 5.6 inserted AMD-extension entries mid-table: a size we do not know is refused, the
    program runs untouched and ROCTx is still recorded."""
    r, db, _ = _run(standin, tmp_path, "--kernel-trace", "--hsa-trace", "--hip-trace",
                    env={"ROCPROF_STANDIN_TABLE": "rocm56"})
    lines = [line for line in r.stderr.splitlines() if "HSA API table" in line]
    assert len(lines) == 1, r.stderr
    assert "AmdExtTable v1" in lines[0] and "CPU-side profiling continues" in lines[0]
    assert "12 dispatches" in r.stdout
    assert db.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0] == 0
    ranges = {m for (m,) in db.execute(
        "SELECT json_extract(extdata, '$.message') FROM regions WHERE category = 'MARKER_CORE_API'")}
    assert ranges == {"setup", "compute", "transfer"}
    assert _metadata(db)["rocprof.hsa.status"].startswith("off: HSA API table of an unknown layout")


def test_other_tick_frequency_is_converted(standin, tmp_path):
    """A runtime whose system clock ticks at 100 MHz: times are scaled back to nanoseconds."""
    _, db, _ = _run(standin, tmp_path, "--kernel-trace",
                    env={"ROCPROF_STANDIN_TICK_HZ": "100000000"})
    got = dict(db.execute("SELECT ks.display_name, max(k.end - k.start) FROM rocpd_kernel_dispatch "
                          "k JOIN rocpd_info_kernel_symbol ks ON ks.id = k.kernel_id GROUP BY 1"))
    assert got == DURATIONS


@pytest.mark.parametrize("mode", [[], ["hold-gil"]], ids=["gil-released", "resolved-after-exit"])
def test_python_launch_site_of_each_dispatch(standin, tmp_path, mode):
    """Each dispatch names its Python line and the stack outward of it; also when the sites are
    resolved only once the script has returned (its module's code is then held for them)."""
    script = support.WORKLOADS / "amd_standin_launch.py"
    r = support.run_rocprof("run", "-d", tmp_path / "out", "--kernel-trace", script,
                            standin["hip"], *mode, env=standin["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    [path] = (tmp_path / "out").rglob("*_results.db")
    line = next(i for i, text in enumerate(script.read_text().splitlines(), 1)
                if "hipModuleLaunchKernel" in text)
    with support.open_db(path) as db:
        from rocpd import _schema

        sites = db.execute(f"SELECT {_schema.line_info_sql('e')}, {_schema.call_stack_sql('e')} "
                           "FROM rocpd_kernel_dispatch k JOIN rocpd_event e ON e.id = k.event_id").fetchall()
        # Stored once as rocpd_event rows, not as rocpd_string rows (the unique index).
        frames_as_strings = db.execute("SELECT count(*) FROM rocpd_string WHERE string LIKE '%\"file\"%'")
        assert frames_as_strings.fetchone() == (0,)
        stats = dict(kv.split("=") for kv in _metadata(db)["rocprof.hsa.launch_sites"].split(","))
    assert len(sites) == 3
    assert all(json.loads(s) == {"file": str(script), "line": line, "function": "launch"}
               for s, _ in sites), (sites, r.stderr)
    for s, stack in sites:  # the whole stack outward of the site follows it
        frames = json.loads(stack)
        assert frames[0] == json.loads(s) and len(frames) > 1
        assert any(f["function"] == "<module>" and f["file"] == str(script) for f in frames[1:])
    # Counted where any went without: none here.
    assert (stats["captured"], stats["queued"], stats["wait_timeouts"], stats["frames_gone"]) \
        == ("3", "1", "0", "0"), stats


def test_dispatches_written_before_their_site_is_resolved_are_counted_and_said(standin, tmp_path):
    """The GIL held through the kernels' completion and 1 s past it: the records are written
    while no thread can resolve their site. They are kept without it, counted, and said."""
    script = support.WORKLOADS / "amd_standin_launch.py"
    r = support.run_rocprof("run", "-d", tmp_path / "out", "--kernel-trace", script,
                            standin["hip"], "hold-gil-busy", env=standin["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    [path] = (tmp_path / "out").rglob("*_results.db")
    with support.open_db(path) as db:
        from rocpd import _schema

        sites = [s for (s,) in db.execute(f"SELECT {_schema.line_info_sql('e')} FROM "
                                          "rocpd_kernel_dispatch k JOIN rocpd_event e ON e.id = k.event_id")]
        stats = dict(kv.split("=") for kv in _metadata(db)["rocprof.hsa.launch_sites"].split(","))
    without = sum(1 for s in sites if not s or s == "{}")
    assert len(sites) == 3 and without > 0, sites
    assert int(stats["wait_timeouts"]) == without and int(stats["waits"]) >= 1, stats
    said = [ln for ln in r.stderr.splitlines() if "Python lines missing" in ln]
    assert said == [f"rocprof: Python lines missing: {without} GPU records were written before the "
                    "resolver reached their stack, 0 new stacks found its queue full (metadata "
                    "rocprof.hsa.launch_sites)"], r.stderr


def test_info_names_the_amd_paths(standin):
    r = support.run_rocprof("info", "--json", env=standin["env"])
    info = json.loads(r.stdout)
    hsa = next(b for b in info["backends"] if b["name"] == "hsa")
    assert hsa["compiled"] and hsa["live"] and "not AMD hardware" in hsa["reason"]
    assert info["amd"]["rocprofiler_sdk"].startswith(_sdk_state())
    assert info["amd"]["hardware"] == "not yet run on AMD hardware"
    text = support.run_rocprof("info", env=standin["env"]).stdout
    assert f"rocprofiler_sdk: {_sdk_state()}" in text


def test_no_amd_gpu_here_is_said_plainly():
    from rocprof import _core

    statuses = {name: (c, live, why) for name, c, live, why in _core.backends()}
    if "hsa" not in statuses or os.path.exists("/dev/kfd"):
        pytest.skip("needs a build with the AMD backend on a machine without an AMD GPU")
    compiled, live, why = statuses["hsa"]
    assert compiled and not live and "/dev/kfd" in why
