"""`rocprof attach PID --method read-only`: sample a Python process's stacks without running
any code in it. rocprof._core.ReadOnlySampler (capture/sampling/read_only.hpp) reads the
target's thread states and frames with process_vm_readv at each tick and writes its samples
into a database of the target's as `rocprof run --sample` does; this module checks who may,
turns refusals into one line naming the setting, and runs the window."""

from __future__ import annotations

import errno
import sys
import time

from .. import _core
from . import owner_check
from .ptrace import AttachError, refusal

DEFAULT_HZ = 100  # py-spy's rate: each sample costs this process a few syscalls per frame


def sample(pid: int, template: str, hz: int, wall: bool, duration: float | None,
           options_json: str = "{}") -> str:
    """Samples pid for `duration` seconds (None: until Ctrl-C or its end); the database's
    path. Raises AttachError with one line."""
    owner_check(pid)
    sampler = _core.ReadOnlySampler()
    try:
        sampler.start(pid, template, hz, wall, options_json)
    except OSError as e:
        if e.errno in (errno.EPERM, errno.EACCES):
            raise AttachError(refusal(pid, e, f"reading the memory of pid {pid} "
                                              "(process_vm_readv)")) from None
        raise AttachError(f"rocprof attach: {e.strerror}") from None
    except RuntimeError as e:
        raise AttachError(f"rocprof attach: {e}") from None
    window = f"for {duration:g} s" if duration else "until Ctrl-C or its end"
    print(f"rocprof attach: pid {pid}: sampling its Python {sampler.layout} stacks read-only at "
          f"{hz} Hz ({'wall' if wall else 'cpu'} mode) {window}; nothing runs in it",
          file=sys.stderr, flush=True)
    end = time.monotonic() + duration if duration else None
    try:
        while sampler.running:
            left = 0.05 if end is None else min(0.05, end - time.monotonic())
            if left <= 0:
                break
            time.sleep(left)
    except KeyboardInterrupt:
        pass
    finally:
        result = sampler.stop()
    missed = f", {result['missed']} missed (in the database's drop counts)" \
        if result["missed"] else ""
    ended = "; the process ended" if result["target_ended"] else ""
    print(f"rocprof attach: pid {pid}: {result['taken']} samples of {result['threads']} "
          f"thread(s){missed}{ended}", file=sys.stderr)
    return result["path"]
