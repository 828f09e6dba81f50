"""Value formats of the CSV set, as rocprofv3 writes them (ROCm/rocm-systems, rocprofiler-sdk)."""

import csv
import re

import rocpd
from rocpd.export import csv as csv_export
from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent


def _build(path):
    with DatabaseBuilder(path, gpus=2) as b:
        b.marker("train", 1_000, 90_000)
        b.region("HIP_RUNTIME_API", "hipLaunchKernel", 2_000, 2_050, correlation_id=b.next_correlation())
        b.region("HIP_COMPILER_API", "__hipPushCallConfiguration", 2_060, 2_061,
                 correlation_id=b.next_correlation())
        b.kernel("gemm", 3_000, 4_000, agent=gpu_agent(1))
        b.kernel("gemm", 5_000, 5_700, agent=gpu_agent(1))
        b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", 6_000, 6_100, 64, src_agent=CPU_AGENT)
        b.allocation("ALLOC", 7_000, 7_010, 4096, address=0xABC0)
        b.allocation("FREE", 8_000, 8_010, 4096, address=0xABC0)
    return str(path)


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _write(tmp_path):
    db_path = _build(tmp_path / "v.db")
    with rocpd.connect(db_path) as db:
        written = csv_export.write(db, str(tmp_path / "out" / "r"))
    return {p.rsplit("/", 1)[-1]: p for p in written}


def test_agent_ids_are_agent_logical_index(tmp_path):
    # source/lib/output/metadata.cpp create_agent_index: "Agent <logical_node_id>" under
    # rocprofv3's default --agent-index relative (output_config.cpp).
    files = _write(tmp_path)
    k = _rows(files["r_kernel_trace.csv"])
    assert {r["Agent_Id"] for r in k} == {"Agent 1"}
    c = _rows(files["r_memory_copy_trace.csv"])[0]
    assert c["Source_Agent_Id"] == "Agent 0" and c["Destination_Agent_Id"] == "Agent 0"
    with open(files["r_kernel_trace.csv"]) as fh:
        fh.readline()
        assert fh.readline().startswith('"KERNEL_DISPATCH","Agent 1",')


def test_allocation_operation_address_and_free_agent(tmp_path):
    # source/lib/output/generateCSV.cpp (memory allocation): address as_hex(address, 16), agent only
    # on ALLOCATE; operation names ROCPROFILER_MEMORY_ALLOCATION_ALLOCATE / _FREE
    # (lib/python/rocpd/source/csv.cpp maps the stored type ALLOC to ALLOCATE).
    rows = _rows(_write(tmp_path)["r_memory_allocation_trace.csv"])
    assert [r["Operation"] for r in rows] == ["MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_FREE"]
    assert all(r["Address"] == "0x000000000000abc0" for r in rows)
    assert all(re.fullmatch(r"0x[0-9a-f]{16}", r["Address"]) for r in rows)
    assert rows[0]["Agent_Id"] == "Agent 0" and rows[1]["Agent_Id"] == ""
    assert csv_export.hex_address(-1) == "0xffffffffffffffff"


def test_marker_correlation_ids_and_domain(tmp_path):
    # generateCSV.cpp (marker trace): Correlation_Id is the record's own internal correlation id
    # (non-zero, unique); Domain is the buffer-tracing kind name MARKER_CORE_API.
    files = _write(tmp_path)
    m = _rows(files["r_marker_api_trace.csv"])
    assert [r["Domain"] for r in m] == ["MARKER_CORE_API"] and m[0]["Function"] == "train"
    hip = _rows(files["r_hip_api_trace.csv"])
    ids = [int(r["Correlation_Id"]) for r in m + hip]
    assert all(i > 0 for i in ids) and len(set(ids)) == len(ids)


def test_domain_stats_names_and_float_formats(tmp_path):
    # source/lib/output/domain_type.cpp: domain_stats names MARKER_API, HIP_API (runtime and
    # compiler together), KERNEL_DISPATCH, ...; source/lib/output/statistics.cpp stats_formatter:
    # floats > 0.01 fixed 6 decimals else scientific 8; Percentage >= 1 fixed 2, > 0.01 fixed 4,
    # else scientific 3.
    files = _write(tmp_path)
    dom = {r["Name"]: r for r in _rows(files["r_domain_stats.csv"])}
    assert "MARKER_API" in dom and "MARKER_CORE_API" not in dom
    assert dom["HIP_API"]["Calls"] == "2" and "HIP_RUNTIME_API" not in dom
    assert dom["HIP_API"]["TotalDurationNs"] == "51" and dom["HIP_API"]["AverageNs"] == "25.500000"
    assert dom["HIP_API"]["StdDev"] == "34.648232"
    k = _rows(files["r_kernel_stats.csv"])[0]
    assert k["AverageNs"] == "850.000000" and k["Percentage"] == "100.00"
    assert k["StdDev"] == "212.132034" and k["MinNs"] == "700" and k["MaxNs"] == "1000"
    from rocpd.summary import stats
    assert stats.format_stat(0.0) == "0.00000000e+00" and stats.format_stat(0.5) == "0.500000"
    assert stats.format_percentage(0.5) == "0.5000" and stats.format_percentage(0.001) == "1.000e-03"
    with open(files["r_kernel_stats.csv"]) as fh:
        assert fh.read().splitlines()[1] == '"gemm",2,1700,850.000000,100.00,700,1000,212.132034'


def test_agent_info_csv(tmp_path):
    # generateCSV.cpp generate_csv(agent_info): 53 columns from Node_Id to Model_Name, sorted by
    # Node_Id, Agent_Type CPU/GPU/UNK; values here are the database's own (rocpd_info_agent).
    files = _write(tmp_path)
    with open(files["r_agent_info.csv"], newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == csv_export.AGENT_INFO_HEADER and len(rows[0]) == 53
    body = [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]
    assert [(r["Node_Id"], r["Logical_Node_Id"], r["Agent_Type"]) for r in body] == [
        ("0", "0", "CPU"), ("0", "0", "GPU"), ("1", "1", "GPU")]
    assert body[2]["Name"] == "gpu1" and body[2]["Product_Name"] == "Test GPU"


def test_agent_info_cpu_cores_come_from_the_writers_metadata_row(tmp_path):
    """rocprof keeps the CPU agent's extdata "{}" (ROCm's reader loads a longer one as a whole
    rocprofiler agent) and records the core count as rocprof.cpu_cores."""
    with DatabaseBuilder(tmp_path / "c.db") as b:
        b.marker("m", 1, 2)
        b.metadata("rocprof.cpu_cores", "8")
    with rocpd.connect(str(tmp_path / "c.db")) as db:
        cpu = [r for r in csv_export.agent_rows(db) if r[3] == "CPU"]
    assert [r[1 + csv_export.AGENT_INFO_HEADER.index("Cpu_Cores_Count")] for r in cpu] == [8]
