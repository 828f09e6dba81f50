"""The README and the manual keep their promises: the README's one-minute path and the manual's
usage pages run as written after the set-up (make demo / make test), writing only under
rocprof-output/ (ignored by git); their links and the repository paths they name resolve inside
the repository; the README stays a first minute (the manual holds the rest); the options
reference is the option table's. (test_wheel_install runs the same commands in a fresh virtual
environment holding only the built wheel; `make docs` builds the site, strict, in CI.)"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from readme_use import MANUAL_PAGES, OUTPUT, blocks, check_outputs, run_use_section, use_blocks
from rocprof import option_table
from support import ROOT

README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))


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


@pytest.mark.parametrize("page", ["README.md"] + [f"docs/{p.name}" for p in DOCS])
def test_repository_paths_named_exist(page):
    # Repository paths named in backticks (`benchmarks/RESULTS.md`, `tests/gpu/...`) exist.
    text = (ROOT / page).read_text()
    tops = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    named = [t for t in re.findall(r"`([^`\s]+)`", text)
             if "/" in t and t.split("/")[0] in tops and not re.search(r"[*?%<>{}\[\]$]", t)]
    missing = [t for t in named if not (ROOT / t).exists()]
    assert not missing, missing


def test_readme_is_a_first_minute():
    lines = README.splitlines()
    assert len(lines) <= 150, len(lines)
    assert "make demo" in README and "make test" in README and "make docs" in README
    assert (ROOT / "docs/images/report.png").stat().st_size > 10_000


def test_commands_shown_outside_the_run_pages_are_not_left_unrun():
    # Every sh/python block of the manual is in a page the README test runs; the set-up's and
    # a GPU host's commands are fenced as shell/text, which a reader is told to run elsewhere.
    for page in DOCS:
        if page.name not in MANUAL_PAGES:
            assert not blocks(page.read_text()), page.name


def test_options_reference_is_the_option_table():
    spec = importlib.util.spec_from_file_location("options_hook", ROOT / "docs/hooks/options.py")
    reference_hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference_hook)
    text = reference_hook.reference()
    for option in option_table.OPTIONS:
        if option.kind != "target":
            assert f"`{option.names[-1]}`" in text, option.names
    assert reference_hook.MARK in (ROOT / "docs" / "options.md").read_text()
