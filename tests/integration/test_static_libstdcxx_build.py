"""A build whose toolchain links libstdc++ statically into shared objects (the GPU hosts'
/opt/gcc, manylinux devtoolset, conda compilers behave this way) must hide that copy: built
here with -static-libstdc++, the libraries export nothing of the C++ runtime and a script that
imports torch and uses the JIT inside a session runs to the end (before the fix it hung in
std::use_facet, on the GPU host it crashed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ALLOWED, ROOT, RUNTIME, WORKLOADS, exported

pytestmark = pytest.mark.slow


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


@pytest.fixture(scope="module")
def static_build(tmp_path_factory):
    cmake, ninja = _tool("cmake"), _tool("ninja")
    if cmake is None or shutil.which("nm") is None:
        pytest.skip("cmake or nm is not installed")
    probe = subprocess.run(["c++", "-static-libstdc++", "-shared", "-fPIC", "-x", "c++", "-",
                            "-o", os.devnull], input="int f(){return 0;}", text=True,
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"this compiler cannot link libstdc++ statically: {probe.stderr[:200]}")
    work = tmp_path_factory.mktemp("static")
    build = work / "build"
    pybind11_dir = subprocess.run([sys.executable, "-m", "pybind11", "--cmakedir"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    flags = "-static-libstdc++ -static-libgcc"
    cfg = [cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
           f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11_dir}",
           f"-DCMAKE_SHARED_LINKER_FLAGS={flags}", f"-DCMAKE_MODULE_LINKER_FLAGS={flags}",
           # The torch observer compiles against torch's headers (the slowest object of the
           # build) and loads only where CUPTI traces: nothing these tests run needs it.
           "-DROCPROF_WITH_TORCH=OFF"]
    if ninja:
        cfg += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    subprocess.run(cfg, check=True, capture_output=True, text=True)
    r = subprocess.run([cmake, "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # A package folder as an install would lay it out: the sources plus these libraries.
    pkg = work / "site"
    shutil.copytree(ROOT / "python" / "rocprof", pkg / "rocprof",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "include"))
    shutil.copytree(ROOT / "python" / "roctx", pkg / "roctx")
    for lib in (build / "cpp").glob("*.so"):
        shutil.copy2(lib, pkg / "rocprof" / lib.name)
    return pkg


def test_static_runtime_is_linked_in_and_hidden(static_build):
    libs = {p.name.split(".")[0]: p for p in (static_build / "rocprof").glob("*.so")}
    needed = subprocess.run(["readelf", "-d", str(libs["librocprof_core"])], capture_output=True,
                            text=True).stdout
    assert "libstdc++" not in needed  # the shape of the GPU host's build
    for key, allow in (("libroctx64", "libroctx64.so"), ("librocprof_core", "librocprof_core.so"),
                       ("_core", "_core"), ("librocprof_inject", "librocprof_inject.so")):
        names = exported(libs[key])
        assert not [n for n in names if RUNTIME.match(n)], key
        assert not [n for n in names if not ALLOWED[allow].match(n)], key


def test_torch_jit_under_a_session_with_the_static_build(static_build, tmp_path):
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(static_build), str(ROOT)]),
               PYTHONUNBUFFERED="1")
    for flags in ([], ["--sys-trace", "--sample", "200"]):
        r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "s",
                            *flags, str(WORKLOADS / "torch_jit.py")], env=env, capture_output=True,
                           text=True, timeout=240)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "scaled(Tensor x, int n) -> Tensor" in r.stdout
        assert str(static_build) in subprocess.run(
            [sys.executable, "-c", "import rocprof; print(rocprof.library_dir())"], env=env,
            capture_output=True, text=True).stdout
