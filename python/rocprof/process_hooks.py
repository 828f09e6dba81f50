"""What a recording Python process wraps while its session runs: os._exit (forked DataLoader
workers leave that way) closes the session first, and os.exec* closes the database before the
new image replaces this one. Shared by the in-process session (session.py) and each followed
child (children.py); light to import, as every followed child imports it before its program.
"""

from __future__ import annotations

import os

from . import _core

_real_os_exit = os._exit
# os.execl/execle/execlp/execlpe/execvp/execvpe all end in one of these two (os.py looks them
# up at each call), so wrapping both covers every os.exec*.
_real_exec = {"execv": os.execv, "execve": os.execve}


def _exit_with_flush(code):
    """os._exit that first closes the session. A launcher leaving this way still names every
    database of its run."""
    try:
        _core.stop_session()
        _core.disarm_on_demand()  # --on-demand: no socket is left behind for rocprof ctl
        # Only the launcher reports: a followed child, and the workers it forks, never load
        # the exit report's module.
        if _core.is_run_launcher():
            from . import run_report

            run_report.finish()
    finally:
        _real_os_exit(code)


def _closing_before(name):
    real = _real_exec[name]

    def exec_closing(*args, **kwargs):
        """The database is closed before the new image replaces this one (its records would
        be lost with the process's memory); the image starts its own. The launcher names
        the run's databases so far, as it cannot at its end."""
        _core.before_exec()
        if _core.is_run_launcher():
            from . import run_report

            run_report.say_outcomes()
        try:
            real(*args, **kwargs)
        except BaseException:
            _core.after_failed_exec()  # still this program: record on, into a new file
            raise

    exec_closing.__name__ = exec_closing.__qualname__ = name
    exec_closing.__doc__ = real.__doc__
    return exec_closing


def install(on: bool) -> None:
    os._exit = _exit_with_flush if on else _real_os_exit
    for name, real in _real_exec.items():
        setattr(os, name, _closing_before(name) if on else real)
