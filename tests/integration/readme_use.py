"""The README's "One minute" section and the manual's usage pages as one program (imported by
test_readme and test_wheel_install): each sh block line by line in a shell, each python block as
a program, in order, in a folder
that holds a copy of examples/, with one environment's commands first on PATH and no
PYTHONPATH (what is installed there must be enough)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from support import ROOT

# Where the README's commands write: one folder, ignored by git.
OUTPUT = "rocprof-output"
DASK_HINT = "pip install 'rocprof[dask]'"


# The manual's pages whose sh and python blocks run, in this order (later ones read what earlier
# ones wrote). Other pages show commands that are not the reader's to run here (the set-up, which
# CI runs itself; a GPU host's), fenced as `shell` or `text`.
MANUAL_PAGES = ("profiling.md", "on-demand.md", "analysis.md", "ranks-and-diff.md")


def blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(sh|python)\n(.*?)```", text, flags=re.S)


def use_blocks() -> list[tuple[str, str]]:
    readme = (ROOT / "README.md").read_text()
    minute = readme[readme.index("\n## One minute\n"):readme.index("\n## The manual")]
    found = blocks(minute)
    for page in MANUAL_PAGES:
        found += blocks((ROOT / "docs" / page).read_text())
    return found


def run_use_section(bindir: Path, cwd: Path, dask: bool) -> list[str]:
    """Run every command; returns the commands that needed the Dask extra. Without `dask`
    installed there, each of those must fail in one line naming the extra."""
    shutil.copytree(ROOT / "examples", cwd / "examples")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(bindir.parent)
    needed_dask = []
    for n, (kind, body) in enumerate(use_blocks()):
        if kind == "python":
            r = subprocess.run(["python", "-c", body], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=300)
            assert r.returncode == 0, f"README block {n}:\n{body}\n{r.stderr[-2000:]}"
            continue
        for line in body.splitlines():
            command = line.split("  #")[0].strip()
            if not command or command.startswith("#"):
                continue
            r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=300)
            if "--dask" in command.split() and not dask:
                needed_dask.append(command)
                lines = r.stderr.strip().splitlines()
                assert r.returncode != 0 and len(lines) == 1 and DASK_HINT in lines[0], \
                    f"README block {n}: {command}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
                continue
            assert r.returncode == 0, f"README block {n}: {command}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    return needed_dask


def check_outputs(cwd: Path) -> None:
    """What the commands promised is there, and they wrote nowhere but the one folder."""
    out = cwd / OUTPUT
    assert (out / "run1_results.db").exists()
    assert list((out / "csv").glob("run1_*.csv"))
    assert (out / "trace.json").stat().st_size > 0
    assert list(out.glob("exp1*_results.db"))
    for name in ("metrics.png", "metrics.pftrace", "report.html", "report.pftrace", "report.md"):
        assert (out / name).stat().st_size > 0, name
    assert len(list((out / "ranks").glob("rank*_results.db"))) == 16
    assert (out / "mine.html").stat().st_size > 0 and (out / "mine2_results.db").exists()
    assert sorted(p.name for p in cwd.iterdir()) == ["examples", OUTPUT]
