"""`rocprof info` names a ROCm rocpd/roctx that shadows ours on sys.path or PATH."""

from __future__ import annotations

import os
import sys

from rocprof.cli.info import name_clashes

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OURS = [ROOT, os.path.join(ROOT, "python")]  # rocpd/ and python/roctx/ of this checkout


def fake_rocm(tmp_path):
    site = tmp_path / "rocm" / "site-packages"
    for name in ("rocpd", "roctx"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("from . import libpyrocpd\n")
    bin_ = tmp_path / "rocm" / "bin"
    bin_.mkdir()
    (bin_ / "rocpd").write_text("#!/usr/bin/env python3\nimport os\nos.execvpe('python3', ['-m', 'rocpd'], {})\n")
    (bin_ / "rocpd").chmod(0o755)
    mine = tmp_path / "venv" / "bin"
    mine.mkdir(parents=True)
    (mine / "rocpd").write_text(f"#!{sys.executable}\nfrom rocpd.cli import main\nmain()\n")
    (mine / "rocpd").chmod(0o755)
    return str(site), str(bin_), str(mine)


def test_no_clash_when_ours_come_first(tmp_path):
    site, bin_, mine = fake_rocm(tmp_path)
    assert name_clashes(OURS + [site], os.pathsep.join([mine, bin_])) == []


def test_rocm_packages_and_command_first_are_named(tmp_path):
    site, bin_, mine = fake_rocm(tmp_path)
    lines = name_clashes([site] + OURS, os.pathsep.join([bin_, mine]))
    assert len(lines) == 3
    rocpd_line, roctx_line, cmd_line = lines
    assert rocpd_line.startswith("import rocpd loads another rocpd") and site in rocpd_line
    assert f"put {ROOT} before it on PYTHONPATH" in rocpd_line
    assert roctx_line.startswith("import roctx") and os.path.join(ROOT, "python") in roctx_line
    assert cmd_line.startswith(f"the rocpd command on PATH is {bin_}/rocpd")
    assert f"run {mine}/rocpd" in cmd_line
    assert all("\n" not in line for line in lines)


def test_without_our_copy_the_line_says_what_to_do(tmp_path):
    site, bin_, _ = fake_rocm(tmp_path)
    lines = name_clashes([site], bin_)
    assert "reinstall rocprof" in lines[0] and "python -m rocpd" in lines[-1]
