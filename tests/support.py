"""Shared test helpers (imported as `support`; conftest.py files are per-folder and not
importable by name): run the real launcher in a subprocess and read databases back."""

from __future__ import annotations

import os
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
