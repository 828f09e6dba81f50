import random

import pytest

from rocpd.testing import DatabaseBuilder

KERNELS = ["gemm_fp16", "relu", "softmax", "layernorm"]


def make_run(path, seed=0, pid=1000, rank=None, n_kernels=200, drops=0):
    """A database with kernels (with API launches and flows), copies, allocations, ROCTx ranges and
    samples; returns the raw rows the test checks figures against."""
    rng = random.Random(seed)
    raw = {"kernels": [], "markers": [], "api": [], "copies": []}
    with DatabaseBuilder(path, pid=pid, rank=rank) as b:
        t = 1_000_000
        b.marker("train", t, t + n_kernels * 2000 + 10_000)
        raw["markers"].append(("train", t, t + n_kernels * 2000 + 10_000))
        for i in range(n_kernels):
            name = KERNELS[rng.randrange(len(KERNELS))]
            corr = b.next_correlation()
            s = t + 100 + i * 2000
            b.region("CUDA_RUNTIME_API", "cudaLaunchKernel", s, s + 50, correlation_id=corr)
            raw["api"].append(("cudaLaunchKernel", s, s + 50))
            ks = s + 300
            ke = ks + rng.randrange(100, 1500)
            b.kernel(name, ks, ke, correlation_id=corr, stream=i % 2)
            raw["kernels"].append((name, ks, ke, pid))
            if i % 50 == 0:
                ms = t + 5_000 + i * 2000
                b.marker("step", ms, ms + 1500)
                raw["markers"].append(("step", ms, ms + 1500))
        for j in range(5):
            cs = t + 50 + j * 7
            b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", cs, cs + 5 + j, 1 << 20)
            raw["copies"].append(("MEMORY_COPY_HOST_TO_DEVICE", cs, cs + 5 + j))
        b.allocation("ALLOC", t, t + 10, 1 << 20)
        b.sample("python", t + 777, call_stack={"frames": ["main", "train"]})
        b.metadata("rocprof.dropped_records", drops)
    return raw


@pytest.fixture
def run_db(tmp_path):
    path = tmp_path / "1000_results.db"
    raw = make_run(path, drops=7)
    return str(path), raw


@pytest.fixture(name="make_run", scope="session")
def make_run_fixture():
    return make_run


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run ``rocpd ARGS`` in this process: (exit status, stdout, stderr)."""
    from rocpd import progress
    from rocpd.cli import main

    monkeypatch.setattr(progress, "_enabled", False)  # main() switches bars on; keep it local

    def run(*args):
        rc = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return rc, out, err
    return run
