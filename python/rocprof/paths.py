"""Output paths as rocprofv3 names them: -d DIR, -o NAME with %placeholders%.

%pid% and %ppid% are left for the native core, which resolves them in the process that
writes (a fork child included); everything else is resolved here.
"""

from __future__ import annotations

import os
import re
import socket

DEFAULT_DIR = "rocprof-output/%hostname%"
DEFAULT_NAME = "%pid%"

_ENV = re.compile(r"%env\{([A-Za-z_][A-Za-z0-9_]*)\}%")
_TOKEN = re.compile(r"%([a-z_]+)%")


def rank() -> str:
    """This process's rank among launched workers (torchrun, MPI, Slurm), else 0."""
    # The same variables, in the same order, as rocpd.filters reads back from a database's
    # environment (global ranks only: LOCAL_RANK repeats on every node).
    for var in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"):
        value = os.environ.get(var)
        if value is not None and value.strip().isdigit():
            return value.strip()
    return "0"


def expand(template: str, keep: tuple[str, ...] = ("pid", "ppid")) -> str:
    """Resolve every placeholder except those in `keep` (left for the process that writes:
    the native core resolves %pid%, %ppid% and %rank%). Unknown ones are an error."""
    text = _ENV.sub(lambda m: os.environ.get(m.group(1), ""), template)
    values = {
        "hostname": socket.gethostname(),
        "rank": rank(),
        "user": os.environ.get("USER", str(os.getuid())),
    }

    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key in keep:
            return m.group(0)
        if key in values:
            return values[key]
        raise ValueError(
            f"unknown placeholder %{key}% in output path {template!r} "
            "(known: %hostname%, %pid%, %ppid%, %rank%, %user%, %env{VAR}%)"
        )

    return _TOKEN.sub(sub, text)


def database_template(output_dir: str | None, output_name: str | None,
                      keep: tuple[str, ...] = ("pid", "ppid")) -> str:
    """`<dir>/<name>_results.db` with placeholders expanded (but those in `keep`)."""
    directory = expand(output_dir or DEFAULT_DIR, keep)
    name = expand(output_name or DEFAULT_NAME, keep)
    return os.path.join(directory, f"{name}_results.db")


def prepare_directory(template: str) -> str:
    """Create the database's folder; raise OSError with a clear message when impossible."""
    directory = os.path.dirname(template) or "."
    if "%pid%" in directory or "%ppid%" in directory:
        directory = directory.replace("%pid%", str(os.getpid())).replace("%ppid%", str(os.getppid()))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise OSError(f"cannot create output directory {directory!r}: {e.strerror}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OSError(f"output directory {directory!r} is not writable")
    return directory
