"""One Backend object per backend, in a static list (rocprof/backends.py): what each can record,
how it is configured, what a child process needs of it. Nothing registers itself at import
time, and importing a backend's module changes nothing in the process."""

from __future__ import annotations

import subprocess
import sys

import pytest
from rocprof import _core, backends
from rocprof.options import Options


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_the_backends_changes_nothing():
    r = _python("import os, sys\n"
                "before = dict(os.environ)\n"
                "import rocprof.backends\n"
                "assert not [m for m in sys.modules if m.startswith('rocprof.capture.')], sys.modules\n"
                "import rocprof.capture.cupti, rocprof.capture.hsa, rocprof.capture.sampling\n"
                "import rocprof.capture.nccl\n"
                "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())\n"
                "print('ok')\n")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_list_is_static_and_describes_every_backend():
    names = [b.name for b in backends.BACKENDS]
    assert names[:3] == ["markers", "cupti", "cupti-counters"] and len(set(names)) == len(names)
    assert backends.get("cupti").activities == tuple(_core.CuptiSettings.SUPPORTED)
    assert backends.get("hsa").activities == tuple(_core.HsaSettings.SUPPORTED)
    assert [b.name for b in backends.BACKENDS if b.gpu] == ["cupti", "hsa"]
    for b in backends.BACKENDS:
        if b.module:  # each configures its own part of the typed settings
            assert callable(b.capture().configure), b.name
            # a prepare() runs only where the Backend says so (configure imports no other module)
            assert hasattr(b.capture(), "prepare") == b.prepares, b.name
    listed = [s["name"] for s in backends.statuses()]
    assert "null" not in listed and listed[0] == "markers"  # rocprof info leaves tests out


def test_a_request_no_backend_serves_is_one_line():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_core, "backends", lambda name="": [("sampling", True, False, "no timer here")])
        _, notes = backends.configure(Options(sample=100))
    assert notes == ["--sample requested but call-stack sampling is unavailable here (no timer here)"]


def test_a_gpu_backend_not_in_the_build_is_answered_without_probing_the_others():
    """A session asks about every GPU backend; one the build lacks (the AMD one on an NVIDIA
    host built without ROCm's headers) is answered from what the build lacks, not by probing
    every backend and asking the AMD PC sampler why it is missing (which runs ldconfig): that
    ran before every profiled program on such hosts."""
    calls, amd_asked = [], []
    real = _core.backends

    def build_without_hsa(name=""):
        calls.append(name)
        return [row for row in real(name) if row[0] != "hsa"]

    amd_sampler_built = any(row[0] == "rocprofiler-sdk-pc-sampling" for row in real())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_core, "backends", build_without_hsa)
        mp.setattr(backends, "_amd_pc_sampling_reason", lambda: amd_asked.append(1) or "why")
        backends.configure(Options(kernel_trace=True, default_gpu=True))  # a plain run's
        assert "hsa" in calls and "" not in calls and amd_asked == []
        status = backends._status("hsa")
        listed = {s["name"]: s for s in backends.statuses()}  # rocprof info: every backend
    assert (status["compiled"], status["live"], status["reason"]) == \
        (False, False, backends.get("hsa").not_compiled)
    assert listed["hsa"] == status
    assert amd_asked == ([] if amd_sampler_built else [1])


def test_child_environment_comes_from_the_backends():
    """The hook each backend has for commands (rocprof run -- CMD), driven by its settings."""
    settings = _core.CaptureSettings()
    settings.hsa.enabled = True
    settings.cupti.enabled = True
    settings.cupti.library_candidates = "/somewhere/libcupti.so"
    env = {"CUDA_INJECTION64_PATH": "/elsewhere/libinject.so"}
    notes = backends.child_environment(Options(), settings, env)
    assert "librocprof_hsa.so" in env["HSA_TOOLS_LIB"] and env["HSA_TOOLS_ROCPROFILER_V1_TOOLS"] == "1"
    assert settings.cupti.library_candidates == ""  # native programs find their own libcupti
    assert env["CUDA_INJECTION64_PATH"] == "/elsewhere/libinject.so"
    assert notes == ["CUDA_INJECTION64_PATH is already set (/elsewhere/libinject.so): CUDA "
                     "programs that do not load libroctx64 are not traced"]


def test_the_null_backend_is_started_and_stopped_by_a_session(tmp_path):
    """A real backend in ≤ 5 files plus its folder: cpp/capture/null/ (its source and CMake
    file), one line in cpp/capture/CMakeLists.txt, one Backend in rocprof/backends.py."""
    testing = pytest.importorskip("rocprof._core_testing", reason="built with the tests only")
    status = next(s for s in backends.statuses(listed_only=False) if s["name"] == "null")
    assert status["compiled"] and status["live"]
    starts, stops = testing._null_backend_calls()
    path = _core.start_session(str(tmp_path / "n_results.db"), null_sink=True)
    assert path
    _core.stop_session()
    assert testing._null_backend_calls() == (starts + 1, stops + 1)


def test_libcupti_candidates_are_listed_once_for_what_they_depend_on(tmp_path, monkeypatch):
    from rocprof.capture import cupti

    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcupti.so.13").write_bytes(b"")
    listed = []
    real = cupti._libcupti_files
    monkeypatch.setattr(cupti, "_libcupti_files", lambda folder: listed.append(folder) or real(folder))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    first = cupti.library_candidates()
    assert str(lib / "libcupti.so.13") in first
    n = len(listed)
    assert cupti.library_candidates() == first and len(listed) == n  # the session's second ask
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))  # what it depends on changed
    cupti.library_candidates()
    assert len(listed) > n


def test_backends_are_told_apart_by_their_attributes_not_their_names():
    """rocprof/backends.py names a backend only in its Backend entry: what sets one apart (part
    of the core, one of several serving a request, a plugin library, why it is missing) is an
    attribute, so a new backend is one entry and no branch elsewhere."""
    import ast
    import inspect

    names = {b.name for b in backends.BACKENDS}
    tree = ast.parse(inspect.getsource(backends))
    entries = next(n for n in tree.body if isinstance(n, ast.AnnAssign)
                   and getattr(n.target, "id", "") == "BACKENDS")
    inside = {id(n) for n in ast.walk(entries)}
    named = [f"line {n.lineno}: {n.value!r}" for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and n.value in names and id(n) not in inside]
    assert not named, "backends.py singles out backends by name:\n  " + "\n  ".join(named)
