"""Output paths as rocprofv3 names them: -d DIR, -o NAME with %placeholders%.

%pid% and %ppid% are left for the native core, which resolves them in the process that
writes (a fork child included); everything else is resolved here.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import time

DEFAULT_DIR = "rocprof-output/%hostname%"
DEFAULT_NAME = "%pid%"

# %env{NAME}%, rocprofv3's alternative $env{NAME}, and %q{NAME}%.
_ENV = re.compile(r"(?:%env|\$env|%q)\{([A-Za-z_][A-Za-z0-9_]*)\}%?")
_TOKEN = re.compile(r"%([a-z_]+)%")
# rocprofv3's one-letter shorthands.
_SHORT = re.compile(r"%([pjrs])(?![a-z_%])")
_SHORT_NAMES = {"p": "%pid%", "j": "%job%", "r": "%rank%", "s": "%size%"}
_LAUNCH = time.strftime("%Y-%m-%d_%H.%M.%S")  # this launcher's start, one value for the run

# The profiled program's command line (the launcher sets it; children see their own argv).
TARGET_ARGV: list[str] = []


def _first_env(*names: str, default: str) -> str:
    for var in names:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return default


def _condensed(words: list[str]) -> str:
    # One path component: separators and spaces become '_'.
    return re.sub(r"[\s/]+", "_", "_".join(words)).strip("_") or "none"


def rank() -> str:
    """This process's rank among launched workers (torchrun, MPI, Slurm), else 0."""
    # The same variables, in the same order, as rocpd.filters reads back from a database's
    # environment (global ranks only: LOCAL_RANK repeats on every node).
    for var in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"):
        value = os.environ.get(var)
        if value is not None and value.strip().isdigit():
            return value.strip()
    return "0"


def ranked() -> bool:
    """Whether this process is one of several launched ranks (a rank variable holds a number)."""
    return any(os.environ.get(v, "").strip().isdigit()
               for v in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"))


def expand(template: str, keep: tuple[str, ...] = ("pid", "ppid")) -> str:
    """Resolve every placeholder except those in `keep` (left for the process that writes:
    the native core resolves %pid%, %ppid% and %rank%). Unknown ones are an error."""
    text = _SHORT.sub(lambda m: _SHORT_NAMES[m.group(1)], template)
    text = _ENV.sub(lambda m: os.environ.get(m.group(1), ""), text)
    argv = TARGET_ARGV or sys.argv
    first = os.path.basename(argv[0]) if argv and argv[0] else "python"
    ranked = any(os.environ.get(v) for v in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                              "SLURM_PROCID", "PMIX_RANK"))
    values = {
        "hostname": socket.gethostname(),
        "rank": rank(),
        "user": os.environ.get("USER", str(os.getuid())),
        # rocprofv3's output prefix keys (its I/O options page).
        "tag": first,
        "argt": _condensed([first, *argv[1:]]),
        "argv": _condensed(list(argv)),
        "args": _condensed(list(argv[1:])),
        "job": _first_env("SLURM_JOB_ID", default="0"),
        "size": _first_env("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                           default="1"),
        "nid": rank() if ranked else "%pid%",
        "pgid": str(os.getpgid(0)),
        "psid": str(os.getsid(0)),
        "launch_time": _LAUNCH,
        "launch_date": _LAUNCH,
        "cwd": os.path.basename(os.getcwd()) or "root",
    }

    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key in keep:
            return m.group(0)
        if key in values:
            return values[key]
        raise ValueError(
            f"unknown placeholder %{key}% in output path {template!r} "
            "(known: %hostname%, %pid%, %ppid%, %rank%, %user%, %tag%, %argt%, %argv%, %args%, "
            "%job%, %size%, %nid%, %pgid%, %psid%, %launch_time%, %cwd%, %env{VAR}%)"
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
