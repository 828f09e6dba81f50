"""The external judge's folder (tests/oracle.py): a test that needs ROCm's rocpd skips where it is
absent, naming where it looked, and fails instead where CI requires it."""

from __future__ import annotations

import os
import subprocess
import sys

import oracle
import pytest
from support import ROOT

PROBE = "import oracle\n\ndef test_needs_judge():\n    oracle.require()\n"


def _run(tmp_path, **env):
    (tmp_path / "test_probe.py").write_text(PROBE)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROCPROF_")}
    base.update(PYTHONPATH=str(ROOT / "tests"), ROCPROF_ROCM_ORACLE=str(tmp_path / "absent"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:xdist",
                           "-p", "no:cacheprovider", str(tmp_path / "test_probe.py")],
                          cwd=tmp_path, env=base, capture_output=True, text=True, timeout=120)


def test_absent_judge_skips_naming_the_folder(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0 and "1 skipped" in r.stdout, r.stdout + r.stderr
    assert str(tmp_path / "absent") in r.stdout


def test_absent_judge_fails_where_required(tmp_path):
    r = _run(tmp_path, ROCPROF_REQUIRE_ORACLE="1")
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
    assert str(tmp_path / "absent") in r.stdout


def test_judge_found_beside_the_checkout_or_handed_down():
    # Here (a developer's checkout, CI) the judge exists: ROCm's package and SQL are read from it.
    folder = oracle.find()
    if folder is None:
        pytest.skip(f"no judge at {oracle.candidates()}")
    assert (folder / "python" / "time_window.py").is_file()
    assert (folder / "sql" / "data_views.sql").is_file()
