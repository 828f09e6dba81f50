"""MkDocs hook: the notebooks of notebooks/ (executed by the tests) are pages of the manual as
they are, read from where they live rather than copied into docs/."""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]


# Before mkdocs-jupyter's own on_files, which turns the notebooks it finds into pages.
@event_priority(100)
def on_files(files, config):
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{nb.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files
