"""`rocprof run -- CMD` on the GPU: a CUDA program with no ROCTx and no code change has every
kernel in its database (CUDA injection), and `-- python3 script` records the same kernels as
the in-process run of the same script."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpuutil import ROOT, env, query

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def plain_cuda(nvcc, tmp_path_factory):
    out = tmp_path_factory.mktemp("plain") / "plain_cuda"
    p = subprocess.run([nvcc, "-O2", str(HERE / "programs/plain_cuda.cu"), "-o", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def rocprof(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), *args],
                          capture_output=True, text=True, env=env(), cwd=ROOT, timeout=600)


def test_cuda_program_without_roctx_has_every_kernel(plain_cuda, tmp_path):
    p = rocprof(tmp_path, "-o", "app", "--kernel-trace", "--", str(plain_cuda), "301")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "launched 301 add_one 200 halve 101" in p.stdout
    db = tmp_path / "app_results.db"
    assert f"results written to {db}" in p.stderr
    counts = dict(query(db, "SELECT name, count(*) FROM kernels GROUP BY name"))
    assert sum(counts.values()) == 301, counts
    assert {k.split("(")[0]: v for k, v in counts.items()} == {"add_one": 200, "halve": 101}


def test_cuda_program_that_execs_keeps_every_kernel(plain_cuda, tmp_path):
    """Its session was started by the CUDA driver's injected library, which the program's exec
    never reaches: the preloaded librocprof_exec closes the database before the exec."""
    p = rocprof(tmp_path, "-o", "app", "--kernel-trace", "--", str(plain_cuda), "301", "/bin/true")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "launched 301 add_one 200 halve 101" in p.stdout
    db = tmp_path / "app_results.db"
    assert query(db, "SELECT count(*) FROM kernels")[0][0] == 301, p.stderr
    status = dict(query(db, "SELECT tag, value FROM rocpd_metadata"))["rocprof.status"]
    assert status == "complete" and not os.path.exists(f"{db}-wal"), p.stderr


def test_python_command_equals_in_process_kernel_count(tmp_path):
    workload = ROOT / "tests/gpu/workloads/torch_steps.py"
    inproc = rocprof(tmp_path / "a", "-o", "in", "--kernel-trace", str(workload), "--steps", "4")
    assert inproc.returncode == 0, inproc.stderr
    e = env()
    e["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{e['PATH']}"
    child = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path / "b"), "-o",
                            "cmd", "--kernel-trace", "--", "python3", str(workload), "--steps", "4"],
                           capture_output=True, text=True, env=e, cwd=ROOT, timeout=600)
    assert child.returncode == 0, child.stderr
    n_in = query(tmp_path / "a" / "in_results.db", "SELECT count(*) FROM kernels")[0][0]
    n_cmd = query(tmp_path / "b" / "cmd_results.db", "SELECT count(*) FROM kernels")[0][0]
    assert n_in > 0 and n_cmd == n_in, (n_in, n_cmd)
