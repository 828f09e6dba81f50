"""Helpers of the GPU tests (tests/gpu): running rocprof and native programs, reading results."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "rocprof"
sys.path[:0] = [str(ROOT / "python"), str(ROOT)]


def _cupti_status():
    try:
        from rocprof import backends

        s = next(s for s in backends.statuses() if s["name"] == "cupti")
        return s["live"], s["reason"] or ("not compiled in" if not s["compiled"] else "not live")
    except Exception as e:  # noqa: BLE001 - a broken build is a reason to skip, shown
        return False, f"rocprof core not importable: {e}"


LIVE, REASON = _cupti_status()


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = f"{ROOT / 'python'}:{ROOT}"
    e["PYTHONUNBUFFERED"] = "1"
    return e


def rocprof_run(tmp_path, *args, check=True, extra_env=None):
    """`python -m rocprof run -d tmp_path ARGS`; returns (database path, completed process)."""
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "t", *args],
                       capture_output=True, text=True, env={**env(), **(extra_env or {})}, cwd=ROOT,
                       timeout=600)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return tmp_path / "t_results.db", p


def native_run(tmp_path, exe, *args):
    """A native program traced through libroctx64's autostart (cupti.enabled=1)."""
    e = env()
    e["LD_LIBRARY_PATH"] = f"{PKG}:{e.get('LD_LIBRARY_PATH', '')}"
    e["ROCPROF_AUTOSTART_OUTPUT"] = str(tmp_path / "native_results.db")
    e["ROCPROF_AUTOSTART_OPTIONS"] = "cupti.enabled=1"
    # Native CUDA programs use the toolkit's runtime: let them use the toolkit's CUPTI too
    # (the PyTorch wheel's copy crashed a toolkit-built program on the H200 machine).
    e.pop("ROCPROF_CUPTI_LIBRARY_PATH", None)
    p = subprocess.run([str(exe), *args], capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}"
    return tmp_path / "native_results.db", p


def query(db, sql, *params):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def compile_cu(nvcc, src, out, *extra):
    cmd = [nvcc, "-O2", "-I", str(ROOT / "cpp/roctx/include"), *extra, str(src), "-L", str(PKG),
           "-lroctx64", f"-Xlinker=-rpath={PKG}", "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, " ".join(cmd) + "\n" + p.stderr[-3000:]
    return out


def segv_backtrace_lib(tmp_path):
    """programs/segv_backtrace.c built as a preload library (a crash prints its native
    backtrace: the GPU host has no gdb); None where no C compiler is found."""
    import shutil

    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    out = Path(tmp_path) / "libsegv_backtrace.so"
    p = subprocess.run([cc, "-shared", "-fPIC", "-o", str(out),
                        str(Path(__file__).parent / "programs/segv_backtrace.c")],
                       capture_output=True, text=True, timeout=120)
    return out if p.returncode == 0 else None


def load_json_line(text):
    return json.loads([ln for ln in text.splitlines() if ln.startswith("{")][-1])
