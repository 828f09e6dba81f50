"""`rocprof info`: what this installation can record on this machine, and why not."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from rocshared.version import __version__

from .._libs import library_dir
from .help_text import epilog

EXAMPLES = (
    'rocprof info               # version, Python, each backend: live, or why not',
    'rocprof info --json        # the same, for scripts',
)


def add_parser(p) -> None:
    p.epilog = epilog(examples=EXAMPLES)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _core_native_stacks() -> str:
    """'' when native frames can be sampled, else why not and what to install."""
    from .. import _core

    return "" if _core.sampling_native_available() else _core.sampling_native_reason()


def _torch_version() -> str | None:
    """torch.__version__ without importing torch: its version.py (what the observer compares at
    run time; a wheel's metadata may lack the local part, "2.11.0" for "2.11.0+cu130")."""
    import importlib.util
    import re
    from importlib import metadata

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return None
    try:
        text = Path(spec.origin).with_name("version.py").read_text(encoding="utf-8")
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if found:
            return found.group(1)
    except OSError:
        pass
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def torch_observer() -> dict:
    """Whether backward kernels name their forward op here: the torch rocprof._torch_observer was
    built against and this Python's torch (from its metadata: torch is not imported)."""
    from .. import _core

    built = _core.torch_observer_build()
    here = _torch_version()
    fallback = "backward kernels carry their backward() call's line"
    if not built["torch"]:
        line = f"not built ({built['reason']}): {fallback}"
    elif here != built["torch"]:
        line = (f"built against torch {built['torch']}, this Python has "
                f"{'torch ' + here if here else 'no torch'}: {fallback} (rebuild rocprof)")
    else:
        line = (f"built against torch {here}: backward kernels name their forward op's line "
                "(on while GPU work is traced, once the program imports torch)")
    return {"built_against": built["torch"] or None, "torch": here, "line": line}


_MARKER = "_ROCPROF_PACKAGE = True"


def _ours(init_file: str | None) -> bool:
    try:
        with open(init_file, encoding="utf-8", errors="replace") as fh:
            return _MARKER in fh.read(4096)
    except (OSError, TypeError):
        return False


def name_clashes(sys_path: list[str] | None = None, path_env: str | None = None) -> list[str]:
    """One line per ROCm package or command that shadows ours: the ``rocpd``/``roctx`` that Python
    imports first (``sys_path``, default sys.path), and the ``rocpd`` command first on PATH."""
    import importlib.machinery
    import os
    import shutil

    sys_path = list(sys.path if sys_path is None else sys_path)
    lines = []
    for name in ("rocpd", "roctx"):
        spec = importlib.machinery.PathFinder.find_spec(name, sys_path)
        found = spec.origin if spec is not None else None
        if found is None or _ours(found):
            continue
        mine = next((os.path.join(d, name, "__init__.py") for d in sys_path
                     if _ours(os.path.join(d or ".", name, "__init__.py"))), None)
        theirs = os.path.dirname(os.path.dirname(found))
        fix = (f"put {os.path.dirname(os.path.dirname(mine))} before it on PYTHONPATH" if mine
               else "reinstall rocprof in this environment")
        lines.append(f"import {name} loads another {name} ({os.path.dirname(found)}), not"
                     f" rocprof's: {fix}, or drop {theirs} from PYTHONPATH to use ours")
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    first = shutil.which("rocpd", path=path_env)
    if first is not None and not _is_our_script(first):
        ours = next((c for d in path_env.split(os.pathsep)
                     if (c := shutil.which("rocpd", path=d)) and _is_our_script(c)), None)
        how = f"run {ours} or put its folder first on PATH" if ours else "run python -m rocpd"
        lines.append(f"the rocpd command on PATH is {first}, not rocprof's: {how} (ROCm's takes"
                     " only -i inputs; ours takes those and more)")
    return lines


def _is_our_script(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "rocpd.cli" in fh.read(4096)
    except OSError:
        return False


HARDWARE = "not yet run on AMD hardware"


def amd_paths() -> dict:
    """What this build compiled of the AMD paths, and that none has run on AMD hardware."""
    from .. import _core

    summary = getattr(_core, "hsa_build_summary", None)
    if summary is None:
        absent = "not compiled: HSA headers absent at build time"
        return {"hsa_tools": absent, "hip_api": absent, "rocprofiler_sdk": absent,
                "hardware": HARDWARE}
    items = dict(part.split(": ", 1) for part in summary().split("; "))
    return {**items, "hardware": HARDWARE}


def run(args) -> int:
    from .. import backends
    from ..capture import metrics

    statuses = backends.statuses()
    sources = metrics.sources()
    if args.json:
        import json

        print(json.dumps({"version": __version__, "python": sys.version.split()[0],
                          "library_dir": library_dir(), "backends": statuses,
                          "metrics_sources": sources,
                          "native_stacks": _core_native_stacks() or "available",
                          "amd": amd_paths(),
                          "torch_observer": torch_observer(),
                          "name_clashes": name_clashes()}, indent=2))
        return 0
    print(f"rocprof {__version__}")
    print(f"Python {sys.version.split()[0]} ({platform.python_implementation()}) on {platform.machine()}")
    print(f"native libraries: {library_dir()}")
    print("backends:")
    width = max(9, *(len(s["name"]) for s in statuses))
    for s in statuses:
        if not s["compiled"]:
            state = "not compiled in"
        elif s["live"]:
            state = "live"
        else:
            state = "compiled, not live"
        reason = f" — {s['reason']}" if s["reason"] else ""
        if s["name"] == "metrics" and sources:
            reason = ""  # said per source below
        print(f"  {s['name']:<{width}} {state}{reason}")
        if s["description"]:
            print(f"  {'':<{width}} {s['description']}")
        if s["name"] == "metrics":
            for src in sources:
                live = "live" if src["live"] else ("not live" if src["compiled"] else "not compiled in")
                detail = src["detail"]
                if detail.startswith("not compiled in"):
                    detail = detail[len("not compiled in"):].strip(" ()")
                print(f"  {'':<{width}} {src['name'] + ':':<10}{live} — {detail}")
    print("AMD paths: " + "; ".join(f"{k}: {v}" for k, v in amd_paths().items() if k != "hardware"))
    print(f"torch observer (backward kernels → forward op): {torch_observer()['line']}")
    print("AMD capture (HSA/HIP tracing, rocprofiler-sdk PC sampling) has not yet run on AMD "
          "hardware.")
    for line in name_clashes():
        print(f"name clash: {line}")
    return 0
