"""The README keeps its promises: its "Use" section runs as written after the set-up (make demo /
make test), writing only under rocprof-output/ (ignored by git); its links and the repository
paths it names resolve inside the repository. (test_wheel_install runs the same section in a
fresh virtual environment holding only the built wheel.)"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from readme_use import OUTPUT, check_outputs, run_use_section, use_blocks
from support import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_use_section_has_blocks():
    kinds = [k for k, _ in use_blocks()]
    assert kinds.count("sh") >= 3 and kinds.count("python") >= 3, kinds


@pytest.mark.slow
def test_readme_use_section_runs_as_written(tmp_path):
    bindir = Path(sys.executable).parent
    if not (bindir / "rocprof").exists() or not (bindir / "rocpd").exists():
        pytest.skip(f"no rocprof/rocpd commands beside {sys.executable}: not the set-up's venv")
    pytest.importorskip("torch")
    dask = importlib.util.find_spec("distributed") is not None
    run_use_section(bindir, tmp_path, dask=dask)
    check_outputs(tmp_path)


def test_readme_examples_write_under_one_ignored_folder():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert f"/{OUTPUT}/" in ignored
    for _kind, body in use_blocks():
        for line in body.splitlines():
            command = line.split("  #")[0]
            for flag, path in re.findall(r"(?:^|\s)(-d|-o|--output-directory|--plot|--roofline)\s+(\S+)",
                                         command):
                if flag == "-o" and ("-d" in command.split() or command.split()[:2] == ["python", "-m"]
                                     and "run" in command.split()):
                    continue  # rocprof run -d DIR -o NAME: a name inside DIR
                assert path.startswith(f"{OUTPUT}/") or path == OUTPUT, (flag, path, line)


def test_readme_links_resolve_inside_the_repository():
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if re.match(r"[a-z]+://", target) or target.startswith("#"):
            continue
        path = (ROOT / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), target
    assert "../" not in README
    # Repository paths named in backticks (`benchmarks/RESULTS.md`, `tests/gpu/...`) exist.
    tops = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    named = [t for t in re.findall(r"`([^`\s]+)`", README)
             if "/" in t and t.split("/")[0] in tops and not re.search(r"[*?%<>{}\[\]$]", t)]
    assert named, "no repository paths found in the README"
    missing = [t for t in named if not (ROOT / t).exists()]
    assert not missing, missing
