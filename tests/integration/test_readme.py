"""The README's "Use" section runs as written after the set-up (make demo / make test): each
sh block line by line in a shell, each python block as a program, in order, in a folder that
holds a copy of examples/, with the venv's commands first on PATH and no PYTHONPATH (the
editable install must be enough)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

pytestmark = pytest.mark.slow


def use_blocks() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\n## Use\n"):text.index("\n## What runs where")]
    return re.findall(r"```(sh|python)\n(.*?)```", section, flags=re.S)


def test_readme_use_section_has_blocks():
    kinds = [k for k, _ in use_blocks()]
    assert kinds.count("sh") >= 3 and kinds.count("python") >= 3, kinds


def test_readme_use_section_runs_as_written(tmp_path):
    bindir = Path(sys.executable).parent
    if not (bindir / "rocprof").exists() or not (bindir / "rocpd").exists():
        pytest.skip(f"no rocprof/rocpd commands beside {sys.executable}: not the set-up's venv")
    pytest.importorskip("torch")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(bindir.parent)
    for n, (kind, body) in enumerate(use_blocks()):
        if kind == "sh":
            for line in body.splitlines():
                command = line.split("  #")[0].strip()
                if not command or command.startswith("#"):
                    continue
                r = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                                   capture_output=True, text=True, timeout=300)
                assert r.returncode == 0, f"README block {n}: {command}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
        else:
            r = subprocess.run(["python", "-c", body], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=300)
            assert r.returncode == 0, f"README block {n}:\n{body}\n{r.stderr[-2000:]}"
    # What the commands promised is there.
    assert (tmp_path / "OUT" / "run1_results.db").exists()
    assert (tmp_path / "csv_out" / "run1_kernel_trace.csv").exists() or \
        list((tmp_path / "csv_out").glob("run1_*.csv"))
    assert (tmp_path / "trace.json").stat().st_size > 0
    assert list((tmp_path / "out").glob("exp1*_results.db"))
