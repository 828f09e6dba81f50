"""``rocpd package``: index databases (and move or copy them into a ``.rpdb`` folder). Above
:mod:`rocpd.io.files` (which reads package indexes to find databases) and the index format
(:mod:`rocpd.io.package`)."""

from __future__ import annotations

import datetime
import os
import shutil

from ..errors import RocpdError
from .files import check_database, expand_paths
from .package import write_index


def output_folder(output_path: str | None, consolidate: bool) -> str:
    """ROCm's choice: no -d -> the current folder (or a new dated .rpdb with --consolidate);
    a -d without the .rpdb ending gets it."""
    if not output_path or os.path.abspath(output_path) == os.getcwd():
        if consolidate:
            return f"rocpd-{datetime.datetime.now():%Y%m%d-%H%M%S}.rpdb"
        return os.getcwd()
    output_path = output_path.rstrip(os.sep)
    return output_path if output_path.endswith(".rpdb") else output_path + ".rpdb"


def package(inputs, output_path: str | None = None, consolidate: bool = False,
            copy: bool = False) -> str:
    """Index (and with ``consolidate`` move, or with ``copy`` copy, into a ``.rpdb`` folder) the
    databases ``inputs`` name (files, globs, folders, index files, .rpdb folders); returns the
    index path."""
    files = expand_paths(inputs)
    for f in files:  # every input checked before anything is written or moved
        check_database(f)
    out_dir = output_folder(output_path, consolidate)
    if consolidate:
        os.makedirs(out_dir, exist_ok=True)
        moved = []
        for f in files:
            dest = os.path.join(out_dir, os.path.basename(f))
            if os.path.abspath(f) != os.path.abspath(dest):
                if os.path.exists(dest):
                    raise RocpdError(f"{dest} exists already; give another -d folder", f)
                (shutil.copy2 if copy else shutil.move)(f, dest)
            moved.append(dest)
        files = moved
    return write_index(files, out_dir)
