"""`%load_ext rocprof` and `%%rocprof`: a cell is profiled in the kernel's process and its
summary shows as HTML (run in a fresh interpreter: an IPython shell is process-wide)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import MESSAGE, _env, open_db

SCRIPT = r"""
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "rocprof")
out = shell.run_cell_magic("rocprof", "-d {out} -o cell1",
                           "import roctx\nfor _ in range(3):\n    with roctx.range('cell-work'):\n        pass\nx = 41 + 1")
print("PATH", out.path)
print("X", shell.user_ns["x"])
print("HTML", "cell-work" in out._repr_html_() and "<table" in out._repr_html_())
bad = shell.run_cell_magic("rocprof", "--sample 0", "pass")
print("BAD", bad)
"""


def test_cell_magic_profiles_the_cell(tmp_path):
    pytest.importorskip("IPython")
    r = subprocess.run([sys.executable, "-c", SCRIPT.replace("{out}", str(tmp_path))],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line
                 and line.split(" ", 1)[0] in ("PATH", "X", "HTML", "BAD"))
    assert lines["X"] == "42" and lines["HTML"] == "True"
    assert lines["BAD"] == "None"  # a bad option is one line, no session, no traceback
    assert "--sample must be between" in r.stdout
    with open_db(lines["PATH"]) as db:
        names = [n for (n,) in db.execute(f"SELECT {MESSAGE} FROM regions")]
    assert names.count("cell-work") == 3
