"""rocprof installed under a folder whose path has a space ("My Projects/.venv/..."): the HSA
runtime splits HSA_TOOLS_LIB at spaces, so the tool is named by its file name and still loads,
for a command (through LD_LIBRARY_PATH) and in rocprof's own process (already loaded). Checked
on the TEST-ONLY software HSA runtime of tests/amd_standin, which reads the variable as ROCr
does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import support
from test_amd_standin import N, standin  # noqa: F401 - the stand-in runtime's fixture


@pytest.fixture(scope="module")
def spaced_site(tmp_path_factory):
    """The rocprof and roctx packages (with the built libraries) under a path with spaces."""
    site = tmp_path_factory.mktemp("paths") / "My Projects" / "site"
    shutil.copytree(support.ROOT / "python" / "rocprof", site / "rocprof",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(support.ROOT / "python" / "roctx", site / "roctx",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _env(site, extra=None):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(support.ROOT)]), **(extra or {}))
    return env


def test_a_command_is_traced_when_rocprof_lives_under_a_path_with_spaces(standin, spaced_site,  # noqa: F811
                                                                          tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", str(out), "--kernel-trace",
                        "--", str(standin["app"]), str(N)], env=_env(spaced_site, standin["env"]),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "not loaded" not in r.stderr, r.stderr
    [db] = out.rglob("*_results.db")
    with support.open_db(db) as c:
        kernels = c.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
    assert kernels == 2 * N, r.stderr


def test_in_process_the_tool_is_found_by_its_file_name(standin, spaced_site):  # noqa: F811
    probe = ("import ctypes, os\n"
             "from rocprof import backends\n"
             "from rocprof.options import Options\n"
             "backends.configure(Options(kernel_trace=True))\n"
             "print(os.environ['HSA_TOOLS_LIB'])\n"
             "ctypes.CDLL(os.environ['HSA_TOOLS_LIB'].split()[-1])  # as the runtime opens it\n"
             "print('loaded')\n")
    r = subprocess.run([sys.executable, "-c", probe], env=_env(spaced_site, standin["env"]), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["librocprof_hsa.so", "loaded"], r.stdout
