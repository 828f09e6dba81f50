"""The one wheel the suite builds (a native build from scratch is its slowest step):
conftest.py hands it to test_wheel_install and test_static_libstdcxx_build as the session's
`wheel` fixture. Under pytest-xdist each worker has a session of its own: the first to ask
builds it, under a lock, and the others of the same run take that one."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

WHEELS = ROOT / "build" / "wheel-test"
STATIC_FLAGS = "-static-libstdc++ -static-libgcc"


def links_libstdcxx_statically() -> str | None:
    """None where this compiler can link libstdc++ into a shared object, else why not."""
    probe = subprocess.run(["c++", *STATIC_FLAGS.split(), "-shared", "-fPIC", "-x", "c++", "-",
                            "-o", os.devnull], input="int f(){return 0;}", text=True,
                           capture_output=True)
    return None if probe.returncode == 0 else probe.stderr[:200] or "c++ failed"


def build_wheel() -> Path:
    """The wheel pip builds from the checkout (scikit-build-core without build isolation; its
    build folder is kept, so a rebuild is incremental), linked as toolchains that carry their
    own libstdc++ link it (the GPU hosts' /opt/gcc, conda's and manylinux's compilers):
    -static-libstdc++ wherever this compiler can, so the README's run from the wheel also runs
    on libraries holding a private C++ runtime."""
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip("scikit_build_core is not installed here (the wheel is built without build "
                    "isolation; make test installs it)")
    WHEELS.mkdir(parents=True, exist_ok=True)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")  # one value for all workers of a run
    with open(WHEELS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built_for = WHEELS / ".built-for-run"
        if run and built_for.exists() and built_for.read_text() == run:
            (built,) = WHEELS.glob("rocprof-*.whl")
            return built
        built_for.unlink(missing_ok=True)
        for old in WHEELS.glob("rocprof-*.whl"):
            old.unlink()
        # Without the torch observer, as a plain `pip install` builds it: its isolated build
        # environment has no torch (and the observer's compile is the slowest of the build).
        settings = ["--config-settings=cmake.define.ROCPROF_WITH_TORCH=OFF"]
        if links_libstdcxx_statically() is None:
            settings += [f"--config-settings=cmake.define.CMAKE_{kind}_LINKER_FLAGS={STATIC_FLAGS}"
                         for kind in ("SHARED", "MODULE")]
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                            "--no-build-isolation", "--disable-pip-version-check", "-w",
                            str(WHEELS), *settings], capture_output=True, text=True, timeout=1200)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        (built,) = WHEELS.glob("rocprof-*.whl")
        built_for.write_text(run)
        return built
