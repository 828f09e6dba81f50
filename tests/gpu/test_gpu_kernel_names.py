"""Kernel names on real CUPTI records: -T and --trace-kernel-include/exclude-regex through the
whole path (command line, typed settings, the child's autostart, the CUPTI backend), named by
the module the AMD backend shares (cpp/capture/kernel_names.hpp). programs/trace_test.cu runs
fill_kernel 50 times and scale_kernel<float> 20 times."""

import subprocess
import sys
from pathlib import Path

import pytest
from gpuutil import ROOT, compile_cu, env, query

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def trace_test(nvcc, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    return compile_cu(nvcc, HERE / "programs/trace_test.cu", tmp / "trace_test")


def _kernels(exe, tmp_path, *options) -> dict[str, int]:
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "k",
                        "--kernel-trace", *options, "--", str(exe)],
                       capture_output=True, text=True, env=env(), cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return dict(query(tmp_path / "k_results.db", "SELECT name, count(*) FROM kernels GROUP BY name"))


def test_truncated_names(trace_test, tmp_path):
    assert _kernels(trace_test, tmp_path, "-T") == {"fill_kernel": 50, "scale_kernel": 20}


def test_trace_kernel_regexes(trace_test, tmp_path):
    got = _kernels(trace_test, tmp_path, "--trace-kernel-include-regex", "_kernel",
                   "--trace-kernel-exclude-regex", "^void scale_kernel<float>")
    assert [(name.split("(")[0], n) for name, n in got.items()] == [("fill_kernel", 50)], got
