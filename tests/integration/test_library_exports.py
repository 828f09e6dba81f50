"""Our shared libraries export their API and no C++ runtime symbol: a library that exports
libstdc++ symbols interposes on libraries loaded after it (PyTorch's), which crashed
`import torch` under a session on a GPU host whose compiler links libstdc++ statically."""

from __future__ import annotations

import importlib.machinery
import shutil
from pathlib import Path

import pytest
import rocprof
from support import ALLOWED, RUNTIME, exported


def shipped_libraries() -> list[Path]:
    """The libraries this interpreter loads: an in-place build for another Python beside it
    leaves its own extension modules (_core.cpython-3XX-...) in the same folder."""
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    libs = sorted(p for p in Path(rocprof.library_dir()).glob("*.so")
                  if not p.name.startswith("_") or p.name.endswith(ext))
    assert {p.name.split(".")[0] for p in libs} >= {"libroctx64", "librocprof_core", "_core",
                                                            "librocprof_inject", "librocprof_exec"}, libs
    return libs


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
@pytest.mark.parametrize("name", ["libroctx64.so", "librocprof_core.so", "_core",
                                  "librocprof_inject.so", "librocprof_exec.so",
                                  "librocprof_hsa.so", "librocprof_nccl.so", "_torch_observer"])
def test_no_cxx_runtime_symbol_is_exported(name):
    found = [p for p in shipped_libraries() if p.name.split(".")[0] == name.split(".")[0]]
    if not found and name == "librocprof_hsa.so":
        pytest.skip("the AMD backend is not compiled into this build (HSA headers absent)")
    if not found and name == "_torch_observer":
        pytest.skip(f"the torch observer is not built: {rocprof._core.torch_observer_build()['reason']}")
    (lib,) = found
    names = exported(lib)
    runtime = [n for n in names if RUNTIME.match(n)]
    assert not runtime, f"{lib.name} exports {len(runtime)} C++ runtime symbols, e.g. {runtime[:5]}"
    outside = [n for n in names if not ALLOWED[name].match(n)]
    assert not outside, f"{lib.name} exports symbols outside its API: {outside[:5]}"


def test_runtime_pattern_recognises_libstdcxx_names():
    # The check must see what the GPU host's build exported.
    for sym in ["_ZNSt6localeC1Ev", "_ZNKSt5ctypeIcE8do_widenEc", "_ZSt4cout", "_ZTISt9exception",
                "_ZNSbIwSt11char_traitsIwESaIwEE10_S_compareEmm", "_Znwm", "_ZdlPv",
                "__cxa_throw", "_ZN9__gnu_cxx18__exchange_and_addEPVii", "_ZGVNSt7collateIcE2idE"]:
        assert RUNTIME.match(sym), sym
    for sym in ["roctxMarkA", "PyInit__core", "_ZN7rocprof7session7currentEv"]:
        assert not RUNTIME.match(sym), sym


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_exec_library_preloaded_into_every_process_needs_only_libc():
    """librocprof_exec.so goes into every process of `rocprof run -- CMD`: loading it must not
    bring the C++ runtime (or our core) into programs that never record."""
    import re
    import subprocess

    (lib,) = [p for p in shipped_libraries() if p.name == "librocprof_exec.so"]
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True,
                             check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    assert needed and needed <= {"libc.so.6", "libdl.so.2"}, needed
