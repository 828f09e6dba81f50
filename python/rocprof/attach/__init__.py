"""`rocprof attach PID`: arm on-demand capture (session/control.hpp) in a process that was not
started by rocprof, then record windows through its control socket as `rocprof ctl` does.

Methods, chosen in this order:
- remote-exec: Python >= 3.14 targets, through the interpreter's safe external-debugger
  interface (sys.remote_exec, PEP 768): the target runs agent.py at its next safe point and
  arms a full session (ROCTx from Python, sampling, GPU) like `rocprof run --on-demand`; needs
  rocprof importable by the target's interpreter and this one >= 3.14 too;
- ptrace: any other process (native programs, older Pythons): librocprof_inject.so is loaded
  with a dlopen call made on the stopped main thread (ptrace.py), which arms native capture:
  ROCTx through libroctx64, GPU tracing;
- read-only: a Python process whose code we may not, or need not, run code in: its Python
  stacks are sampled from here by reading its memory (readonly.py), as py-spy --pid does.
  `auto` takes it when injection is refused or not possible (the reason is printed), and
  when Python stacks are all that is asked of a Python < 3.14 (ptrace loading samples none).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time

from .._libs import library_dir
from ..control import socket_of_pid
from .ptrace import AttachError, InjectionRefused, inject, mapped_files

__all__ = ["AttachError", "InjectionRefused", "arm", "python_version_of", "read_only_reason"]


def owner_check(pid: int) -> None:
    """Only the same user or root may attach."""
    try:
        with open(f"/proc/{pid}/status") as f:
            uid = int(next(line for line in f if line.startswith("Uid:")).split()[1])
    except (OSError, StopIteration):
        raise AttachError(f"rocprof attach: process {pid} does not exist") from None
    if os.geteuid() not in (0, uid):
        raise AttachError(f"rocprof attach: process {pid} belongs to uid {uid}: only that user "
                          "or root may attach")


def python_version_of(pid: int) -> tuple[int, int] | None:
    """The CPython version whose library or executable process pid runs, else None."""
    names = set()
    try:
        names.add(os.path.basename(os.readlink(f"/proc/{pid}/exe")))
        names.update(os.path.basename(file) for _start, file in mapped_files(pid)
                     if "python" in file)
    except OSError:
        return None
    for n in sorted(names):
        m = re.match(r"(?:lib)?python(\d)\.(\d+)", n)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def _remote_exec(pid: int, spec: str) -> None:
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = tempfile.NamedTemporaryFile("w", suffix=".py", prefix="rocprof-attach-",
                                         delete=False)
    with script:
        script.write("import sys\n"
                     f"sys.path.insert(0, {package_root!r})\n"
                     "from rocprof.attach.agent import arm\n"
                     f"arm({spec!r})\n")
    sys.remote_exec(pid, script.name)  # runs at the target's next safe point


def arm(pid: int, template: str, settings_text: str, options_json: str,
        method: str = "auto") -> str:
    """Arms pid; returns the method used. Raises AttachError with one line."""
    owner_check(pid)
    version = python_version_of(pid)
    if method == "auto":
        method = ("remote-exec" if version is not None and version >= (3, 14)
                  and hasattr(sys, "remote_exec") else "ptrace")
    if method == "remote-exec":
        if not hasattr(sys, "remote_exec"):
            raise AttachError(f"rocprof attach: remote-exec needs rocprof running on Python >= "
                              f"3.14 (sys.remote_exec, PEP 768); this is "
                              f"{sys.version.split()[0]}")
        if version is None or version < (3, 14):
            raise AttachError(f"rocprof attach: pid {pid} is not a Python >= 3.14 process")
        try:
            _remote_exec(pid, json.dumps({"options": json.loads(options_json)}))
        except (OSError, RuntimeError, ValueError) as e:  # remote debugging off, refused
            raise InjectionRefused(f"rocprof attach: sys.remote_exec({pid}) failed: {e}") from None
        return method
    code = inject(pid, os.path.join(library_dir(), "librocprof_inject.so"), template,
                  settings_text)
    if code == 1:
        raise AttachError(f"rocprof attach: pid {pid} already records or is armed: use "
                          f"`rocprof ctl start {pid}`")
    if code != 0:
        raise AttachError(f"rocprof attach: pid {pid} could not be armed (code {code}; the "
                          "process's stderr says why)")
    return method


def read_only_reason(pid: int, python_samples_only: bool) -> str | None:
    """Why `--method auto` samples pid read-only from the start (None: it injects first):
    Python stacks alone were asked of a Python that only ptrace loading could reach, and
    that loads native capture only."""
    version = python_version_of(pid)
    if not python_samples_only or version is None:
        return None
    if version >= (3, 14) and hasattr(sys, "remote_exec"):
        return None
    return (f"rocprof attach: pid {pid} runs Python {version[0]}.{version[1]}: ptrace loading "
            "samples no Python stacks (sys.remote_exec needs 3.14 on both sides), so they are "
            "sampled read-only")


def wait_socket(pid: int, timeout: float = 15.0) -> str:
    end = time.monotonic() + timeout
    while True:
        try:
            return socket_of_pid(pid)[0]
        except FileNotFoundError:
            if time.monotonic() > end:
                raise AttachError(f"rocprof attach: pid {pid} opened no control socket within "
                                  f"{timeout:.0f} s") from None
            time.sleep(0.05)
