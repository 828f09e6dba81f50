"""A build whose toolchain links libstdc++ statically into shared objects (the GPU hosts'
/opt/gcc, manylinux devtoolset, conda compilers behave this way) must hide that copy: the
wheel the suite builds (conftest.py) is linked with -static-libstdc++ wherever the compiler can;
its libraries export nothing of the C++ runtime and a script that imports torch and uses the JIT
inside a session runs to the end (before the fix it hung in std::use_facet, on the GPU host it
crashed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from support import ALLOWED, ROOT, RUNTIME, WORKLOADS, exported
from wheel_build import links_libstdcxx_statically

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def static_build(wheel, tmp_path_factory):
    why_not = links_libstdcxx_statically()
    if why_not is not None:
        pytest.skip(f"this compiler cannot link libstdc++ statically: {why_not}")
    if shutil.which("nm") is None or shutil.which("readelf") is None:
        pytest.skip("nm or readelf (binutils) is not installed")
    # The wheel's files as an install lays them out (a folder to put on PYTHONPATH).
    site = tmp_path_factory.mktemp("static") / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return site


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
