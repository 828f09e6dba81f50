"""libroctx64.so: the ROCTx C ABI, from a real C program and from ctypes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import MESSAGE, WORKLOADS, _env, build_roctx_program, open_db

rocprof = pytest.importorskip("rocprof")


def lib_dir():
    return rocprof.library_dir()


@pytest.fixture(scope="module")
def c_program(tmp_path_factory):
    return build_roctx_program(WORKLOADS / "roctx_c.c", tmp_path_factory.mktemp("c") / "roctx_c")


def test_c_program_without_session_is_a_no_op(c_program, tmp_path):
    r = subprocess.run([c_program], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("tid ") and not list(tmp_path.iterdir())


def test_c_program_records_into_autostarted_session(c_program, tmp_path):
    db = tmp_path / "c_results.db"
    r = subprocess.run([c_program], capture_output=True, text=True,
                       env={"ROCPROF_AUTOSTART_OUTPUT": str(db), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    tid = int(r.stdout.split()[1])
    con = open_db(db)
    rows = con.execute(f"SELECT {MESSAGE}, start, end, tid FROM regions_and_samples ORDER BY start").fetchall()
    names = [row[0] for row in rows]
    assert sorted(names) == sorted(["c-mark", "c-outer", "c-inner", "c-startstop"]), names
    assert all(row[3] == tid for row in rows)
    outer = next(row for row in rows if row[0] == "c-outer")
    inner = next(row for row in rows if row[0] == "c-inner")
    assert outer[1] <= inner[1] <= inner[2] <= outer[2]
    assert con.execute("SELECT name FROM threads WHERE tid = ?", (tid,)).fetchone()[0] == "c-main"


def test_ctypes_calls_land_in_the_python_session(tmp_path):
    code = f"""
import ctypes, rocprof
lib = ctypes.CDLL(rocprof.roctx_library())
lib.roctxRangePushA.argtypes = [ctypes.c_char_p]
lib.roctxMarkA.argtypes = [ctypes.c_char_p]
lib.roctxRangeStartA.argtypes = [ctypes.c_char_p]
lib.roctxRangeStartA.restype = ctypes.c_uint64
lib.roctxRangeStop.argtypes = [ctypes.c_uint64]
with rocprof.profile(output_dir={str(tmp_path)!r}, output_file='ct'):
    assert lib.roctxRangePushA(b"ctypes-range") == 0
    lib.roctxMarkA(b"ctypes-mark")
    rid = lib.roctxRangeStartA(b"ctypes-startstop")
    assert rid != 0
    lib.roctxRangeStop(rid)
    assert lib.roctxRangePop() == 0
    tid = ctypes.c_uint64()
    assert lib.roctxGetThreadId(ctypes.byref(tid)) == 0
    import threading
    assert tid.value == threading.get_native_id()
"""
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    names = sorted(n for (n,) in open_db(tmp_path / "ct_results.db").execute(f"SELECT {MESSAGE} FROM regions_and_samples"))
    assert names == ["ctypes-mark", "ctypes-range", "ctypes-startstop"]
