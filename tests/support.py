"""Shared test helpers (imported as `support`; conftest.py files are per-folder and not
importable by name): run the real launcher in a subprocess and read databases back."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "tests" / "workloads"


def _env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run_rocprof(*args, env: dict | None = None, cwd=None, timeout: float = 120,
                **popen) -> subprocess.CompletedProcess:
    """`python -m rocprof ARGS` as a user would run it."""
    return subprocess.run([sys.executable, "-m", "rocprof", *map(str, args)], env=_env(env),
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, **popen)


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
    "librocprof_inject.so": re.compile(r"^InitializeInjection$"),
    "librocprof_hsa.so": re.compile(r"^(OnLoad|OnUnload)$"),  # built with the HSA headers
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
