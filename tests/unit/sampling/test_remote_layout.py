"""The read-only sampler's layouts (cpp/capture/python/remote_layout.c) compile against the
headers of every CPython on this machine, not only the one _core is built with: the 3.11/3.12
(_PyCFrame) and 3.13 (current_frame, f_executable) branches, and, with 3.13's headers, the
static checks that the 3.13 _Py_DebugOffsets table it reads from other builds' targets has
each field where that header puts it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT, pythons_here

SOURCE = ROOT / "cpp" / "capture" / "python" / "remote_layout.c"
WITH_HEADERS = [(v, inc) for _, v, inc in pythons_here()
                if (Path(inc) / "internal" / "pycore_frame.h").exists()]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) here")
@pytest.mark.parametrize("version,include", WITH_HEADERS,
                         ids=[f"{v[0]}.{v[1]}" for v, _ in WITH_HEADERS])
def test_layouts_compile_against_this_pythons_headers(version, include):
    r = subprocess.run(["cc", "-std=gnu11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                        f"-I{include}", str(SOURCE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
