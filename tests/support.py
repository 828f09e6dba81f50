"""Shared test helpers (imported as `support`; conftest.py files are per-folder and not
importable by name): run the real launcher in a subprocess and read databases back."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "tests" / "workloads"
AMD_STANDIN = ROOT / "tests" / "amd_standin"
# The regions and samples views name a ROCTx range or mark by its API function (roctxRangePushA),
# as ROCm's views do; what it says is its message, in the event's extdata. MESSAGE is that text
# (the name where there is no message), for tests that query those views.
MESSAGE = "COALESCE(json_extract(extdata, '$.message'), name)"


def _env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def backend_status(name: str, absent: str) -> tuple[bool, bool, str]:
    """(compiled, live, reason) of a capture backend as rocprof._core.backends() reports it;
    `absent` is the reason where this build does not know the backend at all."""
    from rocprof import _core

    for found, compiled, live, why in _core.backends():
        if found == name:
            return compiled, live, why
    return False, False, absent


def run_rocprof(*args, env: dict | None = None, cwd=None, timeout: float = 120,
                **popen) -> subprocess.CompletedProcess:
    """`python -m rocprof ARGS` as a user would run it."""
    return subprocess.run([sys.executable, "-m", "rocprof", *map(str, args)], env=_env(env),
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, **popen)


def run_rocpd(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m rocpd ARGS` as a user would run it."""
    return subprocess.run([sys.executable, "-m", "rocpd", *map(str, args)], env=_env(env),
                          capture_output=True, text=True, timeout=timeout)


def popen_rocprof(*args, env: dict | None = None, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rocprof", *map(str, args)], env=_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def open_db(path) -> sqlite3.Connection:
    """Read-only connection (the test must not change what it checks)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


# What each library may export (mangled names), as cpp/exports/*.map states it.
ALLOWED = {
    "libroctx64.so": re.compile(r"^(roctx|execv?p?e?$|execl[pe]?$|fexecve$)"),
    "librocprof_core.so": re.compile(r"^_Z(N|NK|T[ISV]N|TT|Th[n0-9_]+N|Tv[n0-9_]+N|GVN|TH|TW)7rocprof"),
    "_core": re.compile(r"^PyInit__core$"),
    "librocprof_inject.so": re.compile(r"^(InitializeInjection|rocprof_attach_arm)$"),
    "librocprof_exec.so": re.compile(r"^(execv?p?e?$|execl[pe]?$|fexecve$|rocprof_exec_hooks$)"),
    "librocprof_hsa.so": re.compile(r"^(OnLoad|OnUnload)$"),  # built with the HSA headers
    "librocprof_sdk.so": re.compile(r"^rocprofiler_configure$"),  # with rocprofiler-sdk's
    "librocprof_nccl.so": re.compile(r"^ncclProfiler_v[0-9]+$"),  # NCCL_PROFILER_PLUGIN
    "_torch_observer": re.compile(r"^PyInit__torch_observer$"),  # built where torch was found
}
# The C++ runtime: namespace std and its abbreviations, the ABI support library, operator
# new/delete, personality and unwinder entry points.
RUNTIME = re.compile(r"^(_Z(GV|GTt|T[ISVTHW])?N?K?S[tabiod]|_ZN(K)?(9__gnu_cxx|10__cxxabiv1)"
                     r"|_ZT[ISV]N(9__gnu_cxx|10__cxxabiv1)|_Zn[wa]m|_Zd[la]Pv|__cxa_|__gxx_|_Unwind_)")


def exported(path: Path) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] != "A":
            names.append(parts[2].split("@")[0])
    return names


def _hip_headers() -> str | None:
    for root in (os.environ.get("ROCM_PATH", "/opt/rocm") + "/include", "/usr/include"):
        if os.path.exists(f"{root}/hsa/hsa_api_trace.h") and os.path.exists(
                f"{root}/hip/amd_detail/hip_prof_str.h"):
            return root
    return None


def build_amd_standin(out: Path) -> dict:
    """Builds the TEST-ONLY AMD stand-in (tests/amd_standin: software HSA runtime, HIP stand-in and
    a HIP-like program) into ``out``: {"hsa", "hip", "app", "env"}. Skips, saying why, where it
    can't (no AMD backend compiled, no HSA/HIP headers or C++ compiler)."""
    import shutil

    import pytest
    from rocprof import _core, library_dir

    compiled = {name: c for name, c, _live, _why in _core.backends()}
    if not compiled.get("hsa"):
        pytest.skip("the AMD backend is not compiled into this build (HSA headers absent)")
    include = _hip_headers()
    cxx = shutil.which("g++") or shutil.which("c++")
    if include is None or cxx is None:
        pytest.skip("HSA/HIP headers (libhsa-runtime-dev, libamdhip64-dev) or a C++ compiler missing")
    common = [cxx, "-std=c++17", "-O1", f"-I{include}", "-D__HIP_PLATFORM_AMD__"]
    hsa = out / "librocprof_standin_hsa.so"
    hip = out / "librocprof_standin_hip.so"
    app = out / "hip_like_app"
    lib = library_dir()
    for cmd in (
        [*common, "-fPIC", "-shared", "-fvisibility=hidden", "-o", hsa,
         AMD_STANDIN / "standin_hsa.cpp", AMD_STANDIN / "standin_hsa_tools.cpp", "-ldl",
         "-lpthread"],
        [*common, "-fPIC", "-shared", "-fvisibility=hidden", "-o", hip,
         AMD_STANDIN / "standin_hip.cpp", f"-L{out}", "-lrocprof_standin_hsa", f"-Wl,-rpath,{out}"],
        [*common, f"-I{lib}/include", "-o", app, AMD_STANDIN / "hip_like_app.cpp", f"-L{out}",
         "-lrocprof_standin_hip", "-lrocprof_standin_hsa", f"-L{lib}", "-lroctx64",
         f"-Wl,-rpath,{out}:{lib}"],
    ):
        subprocess.run(list(map(str, cmd)), check=True)
    return {"hsa": hsa, "hip": hip, "app": app, "env": {"ROCPROF_HSA_STANDIN": str(hsa)}}


def build_sdk_standin(out: Path, amd: dict) -> dict:
    """Builds the TEST-ONLY rocprofiler-sdk stand-in (tests/amd_standin/standin_rocprofiler_sdk.cpp
    and its HSA half) into ``out`` against the rocprofiler-sdk headers this build of rocprof was
    compiled with; ``amd`` is build_amd_standin's. Returns ``amd`` with "sdk" and its variable in
    "env". Skips, saying why, where the rocprofiler-sdk backend is not compiled in (no headers
    at build time: tests/amd_standin/rocprofiler_sdk_headers.sh makes a set)."""
    import pytest
    from rocprof import _core

    compiled = {name: c for name, c, _live, _why in _core.backends()}
    if not compiled.get("rocprofiler-sdk-pc-sampling"):
        pytest.skip("the rocprofiler-sdk backend is not compiled into this build (no "
                    "rocprofiler-sdk headers at build time; tests/amd_standin/"
                    "rocprofiler_sdk_headers.sh makes a set)")
    found = re.search(r"rocprofiler_sdk: compiled \(PC sampling, headers in ([^)]+)\)",
                      _core.hsa_build_summary())
    if found is None or not os.path.isdir(found.group(1)):
        pytest.skip(f"the rocprofiler-sdk headers this build used are gone ({found and found.group(1)})")
    cxx = shutil.which("g++") or shutil.which("c++")
    sdk = out / "librocprof_standin_sdk.so"
    objects = [out / "standin_rocprofiler_sdk.o", out / "standin_sdk_hsa.o"]
    for cmd in (
        [cxx, "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-D__HIP_PLATFORM_AMD__",
         f"-I{found.group(1)}", "-c", "-o", objects[0], AMD_STANDIN / "standin_rocprofiler_sdk.cpp"],
        [cxx, "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", f"-I{_hip_headers()}", "-c",
         "-o", objects[1], AMD_STANDIN / "standin_sdk_hsa.cpp"],
        [cxx, "-shared", "-o", sdk, *objects, "-ldl", "-lpthread"],
    ):
        subprocess.run(list(map(str, cmd)), check=True)
    return {**amd, "sdk": sdk, "env": {**amd["env"], "ROCPROF_SDK_STANDIN": str(sdk)}}


def build_roctx_program(src: Path, out: Path, linked: bool = True) -> Path:
    """A C workload (tests/workloads/*.c) built against our ROCTx header and libroctx64, with the
    library's folder as its rpath (``linked=False``: not linked with it, the program opens it
    with dlopen); skips the test where no C compiler is on PATH."""
    import pytest
    import rocprof

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on PATH")
    lib = rocprof.library_dir()
    link = [f"-L{lib}", "-lroctx64", f"-Wl,-rpath,{lib}"] if linked else ["-ldl"]
    subprocess.run([cc, "-O1", "-o", out, src, f"-I{ROOT / 'cpp' / 'roctx' / 'include'}", *link],
                   check=True)
    return out


def pythons_here() -> list[tuple[str, tuple[int, int], str]]:
    """(executable, version, include folder) of each CPython 3.10+ on this machine: python3.X
    on PATH and the versions pyenv keeps (its shims run only the version it has selected),
    this interpreter included. For tests across the Pythons a user may run beside rocprof."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(10, 16)]
    for root in {os.environ.get("PYENV_ROOT") or "", str(Path.home() / ".pyenv")} - {""}:
        candidates += sorted(str(p) for p in Path(root).glob("versions/*/bin/python3.[0-9]*")
                             if re.fullmatch(r"python3\.\d+", p.name))
    found: dict[tuple[int, int], tuple[str, str]] = {}
    ask = "import sys, sysconfig; print(sys.executable, *sys.version_info[:2], " \
          "sysconfig.get_paths()['include'])"
    for exe in [sys.executable, *filter(None, candidates)]:
        r = subprocess.run([exe, "-c", ask], capture_output=True, text=True)
        words = r.stdout.split()
        if r.returncode == 0 and len(words) == 4 and (int(words[1]), int(words[2])) >= (3, 10):
            found.setdefault((int(words[1]), int(words[2])), (words[0], words[3]))
    return [(exe, v, inc) for v, (exe, inc) in sorted(found.items())]
