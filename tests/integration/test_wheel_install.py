"""A plain `pip install` of the wheel does everything the README documents: the wheel is built
from the checkout once (conftest.py: the `wheel` fixture), installed into a fresh virtual
environment with no extras, and the README's Use section runs there. The commands that need the
Dask extra must fail in one line naming it.

PyTorch is the profiled program's own dependency, not rocprof's: the fresh environment sees the
set-up's torch (and what torch itself requires) through a folder of links, and nothing else of
the set-up's packages."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from readme_use import check_outputs, run_use_section

pytestmark = pytest.mark.slow


def _needs(module: str, why: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed here ({why}; make test installs it)")


def _requirement_names(dist: metadata.Distribution) -> list[str]:
    from packaging.requirements import Requirement

    names = []
    for text in dist.requires or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.append(req.name)
    return names


def expose(distribution: str, folder: Path) -> list[str]:
    """Links to a distribution and everything it requires (its modules and metadata), for a
    .pth file: a view of exactly those packages of this environment. Returns their names."""
    folder.mkdir()
    todo, seen = [distribution], []
    while todo:
        name = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        key = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if key in seen:
            continue
        seen.append(key)
        todo += _requirement_names(dist)
        for top in {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            source = Path(dist.locate_file(top))
            if top != "__pycache__" and source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return seen


def test_wheel_in_a_fresh_venv_runs_the_readme(wheel, tmp_path):
    _needs("torch", "the README's examples train a small PyTorch model")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # No extras: the wheel and its declared dependencies, from the package index (pip's cache),
    # byte-compiled as a plain `pip install` does (the README's thirty commands import them).
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install",
                        "--disable-pip-version-check", str(wheel)],
                       capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exposed = expose("torch", tmp_path / "torch-view")
    (site / "the-programs-torch.pth").write_text(str(tmp_path / "torch-view") + "\n")
    assert "dask" not in exposed and "rocprof" not in exposed, exposed
    probe = subprocess.run([str(py), "-c", "import importlib.util as u, rocprof, rocpd; "
                            "print(rocprof.__file__); print(u.find_spec('distributed'))"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    where, dask = probe.stdout.split()
    assert where.startswith(str(site)) and dask == "None", probe.stdout  # the wheel, no extras
    work = tmp_path / "work"
    work.mkdir()
    needed_dask = run_use_section(venv / "bin", work, dask=False)
    assert needed_dask, "the README shows no --dask command: is the Dask section gone?"
    check_outputs(work)
