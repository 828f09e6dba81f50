"""Output-path placeholders for every Python process: rocpd's -d/-o and ``format_path``, and the
launcher's (rocprof.paths). rocprofv3's set, with the core's rules (cpp/session/output_path.cpp),
which expands them in processes that have no Python (C/HIP programs that autostart): the two
are held to one table of template -> expected name (tests/unit/core/placeholders_golden.json).

``%hostname% %pid% %ppid% %rank% %user% %tag% %argt% %argv% %args% %job% %size% %nid% %pgid%
%psid% %launch_time% %cwd%``, ``%env{VAR}%`` (also ``$env{VAR}``, ``%ENV{VAR}%``, ``$ENV{VAR}``,
``%q{VAR}%``) and the shorthands ``%p %j %r %s``. Refused, each with one line naming it: an
unknown placeholder, an unset variable, a value holding '/' or '..' (it could leave the
folder), variables naming each other deeper than ``MAX_ENV_DEPTH``.

Every process `rocprof run` starts imports this module (through rocprof.paths): standard modules
that the program would otherwise not load (re, socket, enum) are kept out."""

from __future__ import annotations

import os
import time

# Variables naming a process's global rank (torchrun, Open MPI, MPICH/Intel MPI, Slurm, PMIx), in
# the order they are read; LOCAL_RANK is not one (it repeats on every node).
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK")
SIZE_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
LAUNCH_TIME_VAR = "ROCPROF_LAUNCH_TIME"
DATABASE_SUFFIX = "_results.db"
MAX_ENV_DEPTH = 4
KNOWN = ("%hostname%, %pid%, %ppid%, %rank%, %user%, %tag%, %argt%, %argv%, %args%, %job%, %size%,"
         " %nid%, %pgid%, %psid%, %launch_time%, %cwd%, %env{VAR}%, and %p %j %r %s")

_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz_")
_NAME_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ") | _LOWER
_NAME = _NAME_FIRST | frozenset("0123456789")
_SHORT_KEYS = {"p": "pid", "j": "job", "r": "rank", "s": "size"}
_own_launch_time: list[str] = []


def rank() -> str:
    """The first rank variable holding a number, else "0"."""
    return next((v for v in (os.environ.get(k, "").strip(" \t\n") for k in RANK_VARIABLES)
                 if _digits(v)), "0")


def ranked() -> bool:
    return any(_digits(os.environ.get(k, "").strip(" \t\n")) for k in RANK_VARIABLES)


def _digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


def own_argv() -> list[str]:
    """This process's command line as the kernel holds it (what a native process reads too)."""
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return []
    return [w.decode(errors="surrogateescape") for w in raw.split(b"\0")[:-1]]


def expand(template: str, argv: list[str] | None = None, pid: int | None = None,
           ppid: int | None = None) -> str:
    """Every placeholder of ``template`` expanded for this process. ``argv``: the profiled
    program's command line (%tag%, %argt% ...); None: this process's own. ``pid``: the path is
    that process's (%pid%, %ppid% are its own). ValueError with one line naming what is wrong."""
    command = own_argv() if not argv else list(argv)
    return _expand(template, command, pid, ppid, 0)


def _expand(whole: str, command: list[str], pid, ppid, depth: int) -> str:
    # The suffix is not the user's text: "-o x_%p" means x_<pid>, not "%p_results.db".
    tmpl = whole[:-len(DATABASE_SUFFIX)] if whole.endswith(DATABASE_SUFFIX) else whole
    out, i = [], 0
    while i < len(tmpl):
        ref = _env_reference(tmpl, i) if tmpl[i] in "%$" else None
        if ref:
            end, var = ref
            out.append(_env_value(tmpl, var, command, pid, ppid, depth))
            i = end
            continue
        if tmpl[i] != "%":
            out.append(tmpl[i])
            i += 1
            continue
        k = i + 1
        while k < len(tmpl) and tmpl[k] in _LOWER:
            k += 1
        if k > i + 1 and tmpl.startswith("%", k):
            value = _value(tmpl[i + 1:k], command, pid, ppid)
            if value is None:
                raise ValueError(f"unknown placeholder {tmpl[i:k + 1]} in output path {shown(tmpl)}"
                                 f" (known: {KNOWN})")
            out.append(value)
            i = k + 1
            continue
        # rocprofv3's one-letter shorthands %p %j %r %s (not followed by a-z, '_' or '%').
        letter, after = tmpl[i + 1:i + 2], tmpl[i + 2:i + 3]
        if letter and letter in "pjrs" and not (after and (after in _LOWER or after == "%")):
            out.append(_value(_SHORT_KEYS[letter], command, pid, ppid))
            i += 2
            continue
        out.append("%")
        i += 1
    return "".join(out) + whole[len(tmpl):]


def _env_reference(t: str, i: int) -> tuple[int, str] | None:
    """At ``i``, one of %env{NAME}%, %ENV{NAME}%, $env{NAME}, $ENV{NAME}, %q{NAME}% (the closing %
    optional, as rocprofv3 reads them): (where it ends, NAME), else None."""
    for opener in ("env{", "ENV{", "q{"):
        if (t[i] == "%" or opener != "q{") and t.startswith(opener, i + 1):
            start = k = i + 1 + len(opener)
            while k < len(t) and t[k] in (_NAME if k > start else _NAME_FIRST):
                k += 1
            if k == start or not t.startswith("}", k):
                return None
            return k + 1 + (t[i] == "%" and t.startswith("%", k + 1)), t[start:k]
    return None


def _env_value(tmpl: str, var: str, command, pid, ppid, depth: int) -> str:
    value = os.environ.get(var)
    if value is None:
        raise ValueError(f"output path {shown(tmpl)}: %env{{{var}}}% names the unset environment"
                         f" variable {var} (set it, or leave it out of the path)")
    if "/" in value or ".." in value:
        raise ValueError(f"output path {shown(tmpl)}: {var}={shown(value)} holds '/' or '..', which"
                         " could put the output outside its folder (use a plain name)")
    if "%" not in value and "$" not in value:
        return value
    if depth + 1 >= MAX_ENV_DEPTH:  # rocprofv3 expands until nothing changes: V naming V stops here
        raise ValueError(f"output path {shown(tmpl)}: {var}={shown(value)} names variables nested"
                         f" more than {MAX_ENV_DEPTH} deep (does it name itself?)")
    return _expand(value, command, pid, ppid, depth + 1)


def _value(key: str, command: list[str], pid, ppid) -> str | None:
    tag = os.path.basename(command[0]) if command and command[0] else "python"
    args = command[1:]
    own = pid is not None and pid != 0
    simple = {
        "hostname": lambda: os.uname().nodename,
        "pid": lambda: str(pid if own else os.getpid()),
        "ppid": lambda: str(ppid if own else os.getppid()),
        "rank": rank,
        "user": lambda: os.environ.get("USER") or str(os.getuid()),
        "tag": lambda: tag,
        "argt": lambda: condensed([tag, *args]),
        "argv": lambda: condensed(command),
        "args": lambda: condensed(args),
        "job": lambda: _first_env(("SLURM_JOB_ID",), "0"),
        "size": lambda: _first_env(SIZE_VARIABLES, "1"),
        "nid": lambda: rank() if ranked() else str(pid if own else os.getpid()),
        "pgid": lambda: str(os.getpgid(0)),
        "psid": lambda: str(os.getsid(0)),
        "launch_time": launch_time,
        "launch_date": launch_time,
        "cwd": _cwd_name,
    }
    get = simple.get(key)
    return get() if get else None


def _first_env(names, fallback: str) -> str:
    return next((v for v in (os.environ.get(n, "").strip(" \t\n") for n in names) if v), fallback)


def condensed(words: list[str]) -> str:
    """Words as one path component: runs of spaces and '/' become '_'."""
    parts = " ".join(words).replace("/", " ").replace("\t", " ").replace("\n", " ").split(" ")
    return "_".join(p for p in parts if p) or "none"


def launch_time() -> str:
    """One value for every process of a run: the launcher exports its start; a process started
    otherwise uses its first expansion's time."""
    value = os.environ.get(LAUNCH_TIME_VAR)
    if value:
        return value
    if not _own_launch_time:
        _own_launch_time.append(time.strftime("%Y-%m-%d_%H.%M.%S"))
    return _own_launch_time[0]


def _cwd_name() -> str:
    try:
        return os.path.basename(os.getcwd()) or "root"
    except OSError:
        return "root"


def shown(s: str) -> str:
    """A path quoted for a message, a very long name in it cut to its ends."""
    parts = [p if len(p) <= 64 else f"{p[:24]}...{p[-24:]}" for p in s.split("/")]
    cut = any(len(p) > 64 for p in s.split("/"))
    return f"'{'/'.join(parts)}'" + (f" ({len(s.encode())} bytes)" if cut else "")
