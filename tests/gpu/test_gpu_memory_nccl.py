"""NCCL's device buffers in the memory trace on a real GPU (rocprof run --memory-allocation-trace):
a one-rank NCCL process group (NCCL refuses two ranks on one device, and this host has one GPU)
whose first collective creates the communicator inside ROCTx range "nccl". The runtime-level
rows (level REAL) that start inside that range and are not the caching allocator's segments
are NCCL's: torch's allocator never sees them (its reserved bytes do not change), and
`rocpd memory` counts them as held at the driver, outside the allocator.

    python -m pytest -q -s tests/gpu/test_gpu_memory_nccl.py
"""

import json
import re
import subprocess
import sys

import pytest
from gpuutil import ROOT, env, load_json_line, query, rocprof_run

torch = pytest.importorskip("torch")
WORKLOAD = str(ROOT / "tests/gpu/workloads/nccl_memory.py")
MiB = 1 << 20


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        pytest.skip("this torch has no NCCL")
    db, p = rocprof_run(tmp_path_factory.mktemp("nccl"), "--memory-allocation-trace", WORKLOAD)
    return db, load_json_line(p.stdout)


def test_nccls_buffers_are_real_rows_outside_the_allocator(run):
    db, facts = run
    ((lo, hi),) = query(db, "SELECT start, \"end\" FROM regions WHERE "
                            "json_extract(extdata, '$.message') = 'nccl'")
    segments = {a for (a,) in query(
        db, "SELECT M.address FROM rocpd_memory_allocate M JOIN rocpd_event E ON E.id = "
            "M.event_id JOIN rocpd_string S ON S.id = E.category_id WHERE S.string = "
            "'TORCH_ALLOCATOR_SEGMENT'")}
    real = query(db, "SELECT address, size, agent_id FROM rocpd_memory_allocate WHERE level = "
                     "'REAL' AND type = 'ALLOC' AND start BETWEEN ? AND ?", lo, hi)
    nccl = [r for r in real if r[0] not in segments]
    nccl_bytes = sum(r[1] for r in nccl)
    r = subprocess.run([sys.executable, "-m", "rocpd", "memory", str(db), "--view", "summary"],
                       capture_output=True, text=True, env=env(), cwd=ROOT, timeout=300)
    held = [_bytes(m.group(1), m.group(2)) for m in
            re.finditer(r"GPU 0: .*held at the driver ([0-9.]+) (B|KiB|MiB|GiB)", r.stdout)]
    print(json.dumps({"nccl_version": facts["nccl"], "rows": len(nccl), "bytes": nccl_bytes,
                      "largest": max((r[1] for r in nccl), default=0),
                      "reserved": [facts["reserved_before"], facts["reserved_after"]],
                      "rocpd_memory": r.stdout[-1500:], "stderr": r.stderr[-500:]}))
    assert facts["sum"] == 1.0  # one rank: the all-reduce is the identity
    # torch's allocator did not see NCCL's memory: its reserved bytes stayed as they were.
    assert facts["reserved_after"] == facts["reserved_before"]
    assert nccl_bytes >= MiB, (len(nccl), nccl_bytes)
    assert r.returncode == 0, r.stderr
    # `rocpd memory` holds them at the driver (with the allocator's segments).
    assert held and held[0] >= nccl_bytes, (held, nccl_bytes, r.stdout)


def _bytes(number, unit):
    return float(number) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
