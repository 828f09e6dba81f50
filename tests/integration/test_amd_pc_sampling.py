"""AMD PC sampling (cpp/capture/rocprofiler_sdk/) through its real entry points, on the TEST-ONLY
stand-ins of tests/amd_standin (no AMD GPU exists here): the software HSA runtime loads the
stand-in rocprofiler-sdk as rocprofiler-register loads the SDK (ROCP_TOOL_LIBRARIES, set by
`rocprof run`); the stand-in loads rocprof's tool library, calls rocprofiler_configure and the
initialize function it returns, wraps the HSA table as the SDK does, and delivers synthetic PC
samples of each dispatch (4, at the kernel's entry + 4 * i) through the buffer callback. What
passes here has not run on AMD hardware (rocprof info and the database say so).

Skipped where this build has no rocprofiler-sdk backend (no headers at build time)."""

from __future__ import annotations

import json

import pytest
import support

N = 6  # launches of each kernel
PER = 4  # samples per dispatch (the stand-in's default)
KERNELS = {"_Z10vector_addPfPKfS1_i": "vector_add(float*, float const*, float const*, int)",
           "_Z10reduce_sumPKfPfi": "reduce_sum(float const*, float*, int)"}


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """The stand-in runtimes, SDK and HIP-like program; skips, saying why, where it can't."""
    out = tmp_path_factory.mktemp("amd_pc")
    return support.build_sdk_standin(out, support.build_amd_standin(out))


def _run(standin, tmp_path, *options, env=None, program=None):
    out = tmp_path / "out"
    r = support.run_rocprof("run", "-d", out, *options, "--",
                            *(program or [standin["app"], str(N)]),
                            env={**standin["env"], **(env or {})}, timeout=180)
    assert r.returncode == 0, r.stderr
    [path] = out.rglob("*_results.db")
    return r, path


def _metadata(db) -> dict:
    return dict(db.execute("SELECT tag, value FROM rocpd_metadata"))


@pytest.fixture(scope="module")
def host_trap(standin, tmp_path_factory):
    return _run(standin, tmp_path_factory.mktemp("host_trap"), "--pc-sampling-method",
                "host_trap", "--pc-sampling-unit", "time", "--pc-sampling-interval", "10",
                env={"ROCPROF_STANDIN_PCS_DROPPED": "5", "ROCPROF_STANDIN_PCS_INVALID": "3"})


def test_each_sample_names_its_traced_dispatch(host_trap):
    _, path = host_trap
    with support.open_db(path) as db:
        rows = db.execute(
            "SELECT p.dispatch_id, p.kernel_name, p.name, p.correlation_id, k.kernel_name, "
            "e.correlation_id, p.agent_id, d.agent_id FROM pc_samples p LEFT JOIN "
            "rocpd_kernel_dispatch d ON d.dispatch_id = p.dispatch_id LEFT JOIN "
            "rocpd_info_kernel_symbol k ON k.id = d.kernel_id LEFT JOIN rocpd_event e ON "
            "e.id = d.event_id").fetchall()
        dispatches = db.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0]
    assert dispatches == 2 * N
    assert len(rows) == 2 * N * PER
    for dispatch, kernel, name, corr, traced_kernel, traced_corr, agent, traced_agent in rows:
        assert dispatch is not None and kernel == traced_kernel, rows  # the HSA backend's row
        assert corr == traced_corr and corr != 0
        assert name == KERNELS[kernel]  # the symbol's display name
        assert agent == traced_agent
    per_dispatch = {}
    for dispatch, *_ in rows:
        per_dispatch[dispatch] = per_dispatch.get(dispatch, 0) + 1
    assert set(per_dispatch.values()) == {PER} and len(per_dispatch) == 2 * N


def test_offsets_code_objects_and_wave_state(host_trap):
    _, path = host_trap
    with support.open_db(path) as db:
        rows = db.execute("SELECT kernel_name, dispatch_id, code_object, pc_offset, stall_reason, "
                          "extdata, start, \"end\", count FROM pc_samples").fetchall()
    entries = {}
    for kernel, _dispatch, code_object, offset, stall, extdata, start, end, count in rows:
        entries.setdefault(kernel, set()).add((code_object, offset))
        assert stall is None and count == 1 and start == end > 0  # host-trap: no wave state
        state = json.loads(extdata)
        assert set(state) == {"exec_mask"}
    for kernel, pcs in entries.items():
        [code_object] = {c for c, _ in pcs}
        first = min(o for _, o in pcs)
        assert sorted(o - first for _, o in pcs) == [0, 4, 8, 12], kernel
    # Both kernels come from one module: one code object, two entries.
    assert len({c for pcs in entries.values() for c, _ in pcs}) == 1
    assert len({min(o for _, o in pcs) for pcs in entries.values()}) == 2
    masks = {json.loads(extdata)["exec_mask"] for *_, extdata, _start, _end, _count in rows}
    assert masks == {f"0x{(2**64 - 1) >> i:016x}" for i in range(PER)}


def test_method_period_and_lost_samples_in_metadata(host_trap):
    r, path = host_trap
    with support.open_db(path) as db:
        meta = _metadata(db)
    assert meta["rocprof.pc_sampling.status"] == "on"
    assert meta["rocprof.pc_sampling.method"] == "host_trap"
    assert meta["rocprof.pc_sampling.unit"] == "time"
    assert meta["rocprof.pc_sampling.interval"] == "10"
    assert meta["rocprof.pc_sampling.period"] == "GPU0=host_trap every 10 us"
    assert meta["rocprof.pc_sampling.samples"] == str(2 * N * PER)
    assert meta["rocprof.pc_sampling.dropped"] == "5"
    assert meta["rocprof.pc_sampling.invalid_samples"] == "3"
    assert meta["rocprof.pc_sampling.total_samples"] == str(2 * N * PER + 5 + 3)
    assert meta["rocprof.pc_sampling.samples_without_dispatch"] == "0"
    assert "rocprofiler-sdk host_trap" in meta["rocprof.pc_sampling.backend"]
    assert "not run on AMD hardware" in meta["rocprof.pc_sampling.backend"]
    assert meta["rocprof.dropped_records.pc_samples"] == "5"
    assert meta["rocprof.dropped_records.pc_samples_invalid"] == "3"
    assert "5 samples dropped" in r.stderr and "3 the SDK could not attribute" in r.stderr


def test_rocpd_pcsamples_reads_them(host_trap):
    _, path = host_trap
    r = support.run_rocpd("pcsamples", path)
    assert r.returncode == 0, r.stderr
    for name in KERNELS.values():
        assert name in r.stdout
    assert f"{N * PER}" in r.stdout


def test_stochastic_samples_carry_stall_reasons(standin, tmp_path):
    _, path = _run(standin, tmp_path, "--pc-sampling-method", "stochastic",
                   "--pc-sampling-unit", "cycles")
    with support.open_db(path) as db:
        stalls = dict(db.execute("SELECT stall_reason, sum(count) FROM pc_samples GROUP BY 1"))
        states = [json.loads(e) for (e,) in db.execute("SELECT extdata FROM pc_samples")]
        meta = _metadata(db)
    half = 2 * N * PER // 2
    assert stalls == {"issued": half, "waitcnt": half}
    assert {(s["wave_issued"], s["inst_type"]) for s in states} == {(1, "valu"), (0, "no_inst")}
    assert {s["wave_count"] for s in states} == set(range(1, PER + 1))
    # rocprofv3's documented stochastic interval where none is given.
    assert meta["rocprof.pc_sampling.period"] == "GPU0=stochastic every 1048576 cycles"


def test_a_unit_the_gpu_lacks_is_said_in_one_line(standin, tmp_path):
    r, path = _run(standin, tmp_path, "--pc-sampling-method", "host_trap",
                   "--pc-sampling-unit", "cycles")
    lines = [line for line in r.stderr.splitlines() if "PC sampling (rocprofiler-sdk) off" in line]
    assert len(lines) == 1, r.stderr
    assert "--pc-sampling-unit cycles" in lines[0] and "host_trap by time" in lines[0]
    with support.open_db(path) as db:
        assert db.execute("SELECT count(*) FROM rocpd_pc_sample").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0] == 2 * N
        assert _metadata(db)["rocprof.pc_sampling.status"].startswith("off: GPU0: ")


def test_python_program_in_process(standin, tmp_path):
    """`rocprof run script.py`: the session starts in the launcher's process before the script
    loads the GPU runtime, so the SDK's initialize finds it running."""
    script = support.WORKLOADS / "amd_standin_launch.py"
    _, path = _run(standin, tmp_path, "--pc-sampling-method", "host_trap", "--pc-sampling-unit",
                   "time", program=[script, standin["hip"]])
    with support.open_db(path) as db:
        got = db.execute("SELECT kernel_name, count(*), count(DISTINCT dispatch_id) FROM "
                         "pc_samples GROUP BY 1").fetchall()
    assert got == [("_Z6scalePfi", 3 * PER, 3)]


def test_info_says_built_and_not_run_on_amd_hardware(standin):
    r = support.run_rocprof("info", "--json", env=standin["env"])
    info = json.loads(r.stdout)
    pc = next(b for b in info["backends"] if b["name"] == "rocprofiler-sdk-pc-sampling")
    assert pc["compiled"] and pc["live"] and "not run on AMD hardware" in pc["reason"]
    assert info["amd"]["rocprofiler_sdk"].startswith("compiled (PC sampling")
