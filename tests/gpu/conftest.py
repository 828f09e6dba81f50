"""GPU tests: run only where an NVIDIA GPU and CUPTI are live; elsewhere every test here is
skipped with the reason `rocprof info` gives."""

import os
import shutil

import pytest
from gpuutil import LIVE, REASON


def pytest_collection_modifyitems(config, items):
    if LIVE:
        return
    mark = pytest.mark.skip(reason=f"no NVIDIA GPU tracing here: {REASON}")
    for item in items:
        # tests/gpu/amd skip themselves unless an AMD GPU is live (their own reason).
        if "tests/gpu" in str(item.fspath) and "tests/gpu/amd" not in str(item.fspath):
            item.add_marker(mark)


@pytest.fixture(scope="session")
def nvcc():
    exe = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(exe):
        pytest.skip("nvcc not found")
    return exe
