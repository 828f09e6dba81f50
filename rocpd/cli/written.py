"""How every `rocpd` subcommand names a file it wrote: `wrote /absolute/path`, one a line on
standard output, so the line can be copied or piped whatever folder the command ran in."""

from __future__ import annotations

import os


def wrote(path) -> str:
    """Print `wrote PATH` with PATH absolute; returns it."""
    shown = os.path.abspath(os.fspath(path))
    print(f"wrote {shown}")
    return shown
