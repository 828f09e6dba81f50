"""Loading rocprof must not change how other extensions' C++ exceptions unwind (a linked
libunwind once made every later C++ throw in the process abort)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import _env

PROBES = {
    "torch": "import torch\ntry:\n    torch.zeros(2)[5]\nexcept IndexError:\n    print('caught')\n",
    "matplotlib": "import matplotlib.ft2font as f\nprint('caught' if getattr(f, 'no_such_attr', None) is None else 'x')\n",
}


@pytest.mark.parametrize("native", [False, True], ids=["python-stacks", "native-stacks"])
@pytest.mark.parametrize("package", sorted(PROBES))
def test_exceptions_thrown_by_other_extensions_still_unwind(package, native, tmp_path):
    pytest.importorskip(package)
    code = ("import rocprof, roctx\n"
            f"s = rocprof.profile(output_dir={str(tmp_path)!r}, sample=100, native_stacks={native})\n"
            "s.start()\n"
            + PROBES[package] + "s.stop()\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "caught" in r.stdout
