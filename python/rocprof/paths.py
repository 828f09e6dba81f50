"""Output paths as rocprofv3 names them: -d DIR, -o NAME with %placeholders%.

The native core owns them (session/output_path.hpp, through rocprof._core): the rank variables,
the _results.db suffix, folder creation and the claim that keeps two writers out of one file.
Placeholders are expanded in Python by rocshared.placeholders, the one Python implementation, which
rocpd's own -d/-o use too; the core expands them the same way (one table holds both to it) in
native programs that autostart without Python.
"""

from __future__ import annotations

import os
import sys
import time

from . import _core

# The profiled program's command line (the launcher sets it; children see their own argv).
TARGET_ARGV: list[str] = []


def argv() -> list[str]:
    return list(TARGET_ARGV or sys.argv)


def mark_launch() -> None:
    """Fix %launch_time% for this process and its children (the launcher, once)."""
    os.environ.setdefault(_core.LAUNCH_TIME_VAR, time.strftime("%Y-%m-%d_%H.%M.%S"))


def database_template(output_dir: str | None, output_name: str | None) -> str:
    """`<dir>/<name>_results.db`, the defaults for missing parts, placeholders left in."""
    return _core.database_template(output_dir or "", output_name or "")


def anchored_dir(output_dir: str | None) -> str:
    """-d (or the default folder) made absolute: children may run in another directory."""
    return os.path.abspath(output_dir or _core.DEFAULT_OUTPUT_DIR)


def per_process_name(name: str | None) -> str:
    """-o NAME as a recording process's children use it: with "_%pid%" unless it names the pid."""
    return _core.per_process_name(name or "")


def expand(template: str) -> str:
    """Every placeholder expanded for this process; ValueError names a bad one."""
    from rocshared import placeholders

    return placeholders.expand(template, argv())


def check(template: str, strict: bool = False) -> None:
    """Raise ValueError (placeholders) or OSError (folders, name lengths, --no-clobber) when
    this process could not create the database, before the program starts. Nothing is
    created."""
    error = _core.check_output(expand(template), strict)
    if error:
        raise OSError(error)


def prefix_of(database: str) -> str:
    """What outputs beside a database start with: the path less _results.db."""
    return _core.output_prefix(database)


def rank() -> str:
    """This process's rank among launched workers (torchrun, MPI, Slurm), else "0"."""
    return _core.rank()


def ranked() -> bool:
    """Whether this process is one of several launched ranks (a rank variable holds a number)."""
    return _core.ranked()
