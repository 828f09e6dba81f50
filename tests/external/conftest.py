"""Fixtures of the external-client suite: ROCm's own rocpd package (rocm_client.py), databases we
write (a real CPU run, the AMD stand-in, the C++ writer's fixtures) and a database written the
way ROCm's writer writes one (rocm_writer.py)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import support
from rocm_client import Client, build
from rocm_writer import typical, with_scratch


@pytest.fixture(scope="session")
def rocm(tmp_path_factory) -> Client:
    return Client(build(tmp_path_factory.mktemp("rocm_rocpd")))


@pytest.fixture(scope="session")
def rocm_db(tmp_path_factory):
    """(path, expected links/counts) of a ROCm-shaped database (see rocm_writer.typical)."""
    return typical(tmp_path_factory.mktemp("rocm_shaped") / "4242_results.db")


# Python launch sites (stored as rocpd_event rows of their own, which ROCm's tools must pass by).
_CALLERS = [{"file": "/w/train.py", "line": 40, "function": "main"},
            {"file": "/usr/lib/python3.12/runpy.py", "line": 88, "function": "_run_code", "library": True}]
_SITES = [json.dumps([{"file": "/w/model.py", "line": line, "function": "forward"}, *_CALLERS],
                     separators=(",", ":")) for line in (12, 15)]


def _fixture_db(path: Path) -> str:
    """The C++ writer's own rows (rocprof._core test bindings) with everything ROCm's tools read:
    API launches tied to kernels and copies, ROCTx ranges and marks, allocations, counters,
    Python launch sites."""
    from rocpd.testing import DatabaseBuilder

    rng = random.Random(7)
    with DatabaseBuilder(path, pid=3100) as b:
        t = 1_000_000
        b.marker("train", t, t + 2_000_000)
        for i in range(40):
            s = t + 1000 + i * 40_000
            if i % 10 == 0:
                b.marker(f"epoch {i // 10}", s - 100, s - 100)  # a mark
            corr = b.next_correlation()
            site = _SITES[i % 2] if i % 4 else None
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", s, s + 900, correlation_id=corr, site=site)
            name = ("gemm", "relu", "softmax")[i % 3]
            k = b.kernel(name, s + 2000, s + 2000 + rng.randrange(5_000, 30_000),
                         correlation_id=corr, stream=i % 2, site=site)
            b.counter_value(k, "sm__cycles_elapsed.avg", 1000.0 + i)
        corr = b.next_correlation()
        b.region("CUDA_RUNTIME_API", "cudaMemcpy", t + 1_700_000, t + 1_760_000,
                 correlation_id=corr)
        b.memory_copy("MEMORY_COPY_DEVICE_TO_HOST", t + 1_710_000, t + 1_750_000, 1 << 20,
                      src_agent=2, dst_agent=1, correlation_id=corr)
        b.region("CUDA_RUNTIME_API", "cudaDeviceSynchronize", t + 1_800_000, t + 1_820_000)
        b.allocation("ALLOC", t + 100, t + 900, 1 << 22)
        b.allocation("FREE", t + 1_900_000, t + 1_900_500, 1 << 22)
        b.marker("saved", t + 1_950_000, t + 1_950_000)
        b.sample("python", t + 500_000, call_stack=["main", "train", "step"])
    return str(path)


@pytest.fixture(scope="session")
def our_dbs(tmp_path_factory) -> dict[str, str]:
    """Databases rocprof wrote: {"fixture": the C++ writer's, "cpu": a real CPU run with ROCTx
    ranges, marks and Python samples}. The AMD stand-in run is the ``standin_db`` fixture."""
    tmp = tmp_path_factory.mktemp("ours")
    out = tmp / "cpu"
    r = support.run_rocprof("run", "-d", out, "-o", "marks", "--sample", "2000", "--",
                            sys.executable, support.WORKLOADS / "ranges_and_marks.py")
    assert r.returncode == 0, r.stderr
    return {"fixture": _fixture_db(tmp / "3100_results.db"), "cpu": str(out / "marks_results.db")}


@pytest.fixture(scope="session")
def scratch_db(tmp_path_factory) -> str:
    """A ROCm-shaped database with scratch-memory rows and API arguments (rocm_writer)."""
    return with_scratch(tmp_path_factory.mktemp("rocm_scratch") / "4343_results.db")


@pytest.fixture(scope="session")
def metrics_db(tmp_path_factory) -> str:
    """A real run with sampled metrics (--process-freq: tracks naming no thread), call-stack
    samples (--sample, wall time) and ROCTx ranges and marks on two threads."""
    out = tmp_path_factory.mktemp("metrics")
    r = support.run_rocprof("run", "-d", out, "-o", "m", "--process-freq", "100", "--sample",
                            "1000", "--sampling-mode", "wall", "--", sys.executable,
                            support.WORKLOADS / "ranges_and_marks.py")
    assert r.returncode == 0, r.stderr
    return str(out / "m_results.db")


@pytest.fixture(scope="session")
def standin_db(tmp_path_factory) -> str:
    """The AMD stand-in program traced as --sys-trace would (tests/amd_standin, TEST-ONLY
    software HSA/HIP runtimes); skipped, saying why, where it can't be built."""
    tmp = tmp_path_factory.mktemp("standin")
    s = support.build_amd_standin(tmp)
    r = support.run_rocprof("run", "-d", tmp / "out", "-o", "amd", "--kernel-trace", "--hsa-trace",
                            "--hip-trace", "--memory-copy-trace", "--memory-allocation-trace",
                            "--", s["app"], "3", env=s["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    return str(tmp / "out" / "amd_results.db")
