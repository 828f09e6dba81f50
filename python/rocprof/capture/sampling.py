"""Python half of call-stack sampling: turns Options (sample Hz, mode, native stacks) into
the native backend's typed settings (rocprof._core.SamplingSettings), and registers Python
threads with the sampler as they start."""

from __future__ import annotations

import os
import threading

from .. import _core
from ..options import Options

# The code file of rocprof.cli.target, which runs the profiled script (named, not imported: the
# command line sits above the backends), as its frames name it: beside this package's folder.
LAUNCHER_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "cli", "target.py")


def _install_thread_hook() -> None:
    """Wrap threading.Thread._bootstrap_inner, which every threading thread runs first, so
    that a thread started during the session is sampled from its start (the resolver's scan
    would find it up to one tick, 50 ms, later). The wrapper takes itself out at the first
    thread start after the session ended. Threads made with _thread directly are still found
    by the scan."""
    global _session_seen
    _session_seen = False  # the session is about to start: keep the hook until it has run
    current = threading.Thread._bootstrap_inner
    if getattr(current, "_rocprof_sampling_hook", False):
        return
    original = current

    def _bootstrap_inner(self):
        global _session_seen
        try:
            if _core.sampling_register_thread() >= 0:
                _session_seen = True
            elif _session_seen and threading.Thread.__dict__.get("_bootstrap_inner") is _bootstrap_inner:
                threading.Thread._bootstrap_inner = original  # the session has ended
        except Exception:  # noqa: BLE001 - never break the user's thread
            pass
        try:
            original(self)
        finally:
            # --sampling-method thread reads this thread's frames from another thread: it
            # must stop before the thread's state is freed, right after this returns.
            try:
                _core.sampling_unregister_thread()
            except Exception:  # noqa: BLE001
                pass

    _bootstrap_inner._rocprof_sampling_hook = True
    threading.Thread._bootstrap_inner = _bootstrap_inner


_session_seen = False


def conflict(options: Options) -> str | None:
    """Why the sampling options cannot go together (the launcher's usage error, the in-process
    API's ValueError), or None."""
    if options.native_stacks and options.sampling_method == "thread":
        return ("--native-stacks needs --sampling-method signal (a native stack is unwound "
                "from the sampled thread's own registers)")
    return None


def configure(options: Options, settings) -> list[str]:
    """Fill settings.sampling (rocprof._core.SamplingSettings) from the launcher's options."""
    notes: list[str] = []
    mode = options.sampling_mode or "cpu"
    if mode not in ("cpu", "wall"):
        raise ValueError(f"sampling mode must be 'cpu' or 'wall', not {mode!r}")
    method = options.sampling_method or "signal"
    if method not in ("signal", "thread"):
        raise ValueError(f"sampling method must be 'signal' or 'thread', not {method!r}")
    why = conflict(options)
    if why:
        raise ValueError(why)
    native = bool(options.native_stacks)
    if native and not _core.sampling_native_available():
        notes.append(f"--native-stacks unavailable ({_core.sampling_native_reason()}); "
                     "recording Python frames only")
        native = False
    s = settings.sampling
    s.hz = int(options.sample or _core.SamplingSettings.DEFAULT_HZ)
    s.wall = mode == "wall"
    s.native = native
    s.method = method
    # The launcher's frames (rocprof run → runpy → the script) are cut from samples at
    # resolution: the resolver matches these code files (exactly as frames name them).
    import runpy

    s.launcher_file = LAUNCHER_FILE
    s.runpy_file = runpy._run_code.__code__.co_filename
    _install_thread_hook()
    return notes


def in_child(settings, spec) -> None:
    """A followed Python child (rocprof.children), with its launcher's settings: its threads
    are registered as they start, and its own runpy's frames are cut where its interpreter is
    another."""
    if not spec.same_python:
        import runpy

        settings.sampling.runpy_file = runpy._run_code.__code__.co_filename
    _install_thread_hook()


def _after_fork_child() -> None:
    """A forked child's session (restarted by the core inside fork()) samples only from here,
    once the interpreter has re-made its locks and thread states."""
    try:
        _core.sampling_after_fork_child()
    except Exception:  # noqa: BLE001 - never break the child
        pass


os.register_at_fork(after_in_child=_after_fork_child)
