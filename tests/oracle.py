"""Where ROCm's own rocpd package and view SQL live: an external judge, kept beside the project.

ROCm's files are not part of this project. They lie at ``../shared/oracles/rocm-rocpd`` from the
checkout's root (``python/``, ``sql/``, ``LICENSE``, ``README.md``: rocm-systems 1b1610f). CI's
clone has no ``../shared`` beside it, so ``.ci/run`` hands the folder down in
``ROCPROF_ROCM_ORACLE``; the GPU check carries a copy in the ignored ``.oracle/rocm-rocpd`` of the
checkout (``make gpu-oracle``). Tests that need it skip, naming the folder, where none is found,
unless ``ROCPROF_REQUIRE_ORACLE`` is set (CI): then they fail, so a judge that went missing cannot
pass for a green run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BESIDE = ROOT.parent / "shared" / "oracles" / "rocm-rocpd"
CARRIED = ROOT / ".oracle" / "rocm-rocpd"


def candidates() -> list[Path]:
    given = os.environ.get("ROCPROF_ROCM_ORACLE")
    return [Path(given)] if given else [BESIDE, CARRIED]


def find() -> Path | None:
    """The oracle's folder (holding python/ and sql/), or None."""
    for folder in candidates():
        if (folder / "python" / "__init__.py").is_file() and (folder / "sql").is_dir():
            return folder
    return None


def require() -> Path:
    """The oracle's folder; skips the calling test (fails it under ROCPROF_REQUIRE_ORACLE) where
    there is none."""
    folder = find()
    if folder is not None:
        return folder
    where = " or ".join(str(c) for c in candidates())
    why = (f"ROCm's rocpd package and views (the external judge) are not at {where}: "
           "clone beside ../shared or set ROCPROF_ROCM_ORACLE")
    if os.environ.get("ROCPROF_REQUIRE_ORACLE"):
        pytest.fail(why, pytrace=False)
    pytest.skip(why)


def sql() -> Path:
    return require() / "sql"


def python() -> Path:
    return require() / "python"
