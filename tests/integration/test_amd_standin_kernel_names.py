"""Kernel names on the AMD backend (cpp/capture/hsa/) through its real entry points, on the
TEST-ONLY software HSA runtime and HIP stand-in of tests/amd_standin (no AMD GPU exists here):
-T/--truncate-kernels, -M/--mangled-kernels and the trace's kernel filters, named by the same
module as the CUPTI backend's (cpp/capture/kernel_names.hpp)."""

from __future__ import annotations

import pytest
import support

# PyTorch's kernels (g++-mangled from declarations of the same shape) and a plain one.
VECTORIZED = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPc"
              "Lm1EEEEviT0_T1_")
ELEMENTWISE = ("_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_15gpu_kernel_implIZNS0_16fill_"
               "kernel_cudaERNS0_18TensorIteratorBaseEEUlfE_EEvS4_RKT_EUliE_EEviT1_")
TEMPLATED = "_ZN2ns1kIiEEvPfi"  # void ns::k<int>(float*, int)
PLAIN = "_Z10vector_addPfPKfS1_i"
SYMBOLS = (VECTORIZED, ELEMENTWISE, TEMPLATED, PLAIN)


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """Builds the stand-in runtimes; skips, saying why, where it can't."""
    return support.build_amd_standin(tmp_path_factory.mktemp("amd_standin"))


def _names(standin, tmp_path, *options) -> dict[str, str]:
    """kernel_name -> display_name of the symbols a run of the workload recorded."""
    out = tmp_path / "out"
    r = support.run_rocprof("run", "-d", out, "--kernel-trace", *options,
                            support.WORKLOADS / "amd_standin_names.py", standin["hip"], *SYMBOLS,
                            env=standin["env"], timeout=180)
    assert r.returncode == 0, r.stderr
    [path] = out.rglob("*_results.db")
    with support.open_db(path) as db:
        dispatched = db.execute("SELECT count(*) FROM rocpd_kernel_dispatch").fetchone()[0]
        names = dict(db.execute("SELECT kernel_name, display_name FROM rocpd_info_kernel_symbol"))
    assert dispatched == len(names), (dispatched, names)  # one dispatch per kernel kept
    return names


def test_demangled_by_default(standin, tmp_path):
    names = _names(standin, tmp_path)
    assert names[TEMPLATED] == "void ns::k<int>(float*, int)"
    assert names[VECTORIZED] == (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
    assert names[PLAIN] == "vector_add(float*, float const*, float const*, int)"


def test_truncate_kernels_as_rocprofv3(standin, tmp_path):
    """rocprofv3's -T keeps the function's own name: no return type, scope, template arguments or
    argument list (the AMD backend used to give 'ns::k<int>' and '>' here)."""
    assert _names(standin, tmp_path, "-T") == {
        VECTORIZED: "vectorized_elementwise_kernel", ELEMENTWISE: "elementwise_kernel",
        TEMPLATED: "k", PLAIN: "vector_add"}


def test_mangled_kernels(standin, tmp_path):
    assert _names(standin, tmp_path, "-M") == {s: s for s in SYMBOLS}


def test_trace_kernel_regexes_filter_the_trace(standin, tmp_path):
    """--trace-kernel-include/exclude-regex (POSIX ERE on the demangled name) pick the traced
    kernels, as on CUPTI; the AMD backend used to ignore them."""
    names = _names(standin, tmp_path, "--trace-kernel-include-regex", "^void (at::native|ns)::",
                   "--trace-kernel-exclude-regex", "FillFunctor")
    assert set(names) == {ELEMENTWISE, TEMPLATED}


def test_counter_kernel_regexes_leave_the_trace_whole(standin, tmp_path):
    """--kernel-include/exclude-regex pick the kernels whose counters are read (rocprofv3's
    meaning): every kernel is still traced (the AMD backend used to drop the others)."""
    names = _names(standin, tmp_path, "--kernel-include-regex", "vector_add",
                   "--kernel-exclude-regex", "elementwise")
    assert set(names) == set(SYMBOLS)
