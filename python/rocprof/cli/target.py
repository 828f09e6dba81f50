"""Running the profiled program in this process, the way `python script.py` would."""

from __future__ import annotations

import io
import os
import runpy
import sys

from .. import _core, run_report
from ..options import Options
from ..session import Session


def _exit_code(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    run_report.say(str(code))  # sys.exit("message") prints the message, exits 1
    return 1


def _print_user_traceback(exc: BaseException) -> None:
    """The traceback plain Python would print: frames of the launcher and runpy left out."""
    tb = exc.__traceback__
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(here)
                              or tb.tb_frame.f_code.co_filename == runpy.__file__
                              or "<frozen runpy>" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    import traceback

    try:
        if sys.stderr is not None:
            traceback.print_exception(type(exc), exc, tb)
    except (OSError, ValueError):
        pass  # stderr closed: Python would print nothing either


def _no_such_module(name: str) -> bool:
    """Whether `python -m NAME` would find no package NAME starts with, here: looked up as
    python looks it up (the current folder first), without importing anything. A submodule
    is found by importing its package, part of the program: runpy says when it is missing."""
    import importlib.machinery
    import importlib.util

    top = name.partition(".")[0]
    if not top or top in sys.modules:
        return False
    try:
        if importlib.util.find_spec(top) is not None:
            return False
    except (ImportError, ValueError):
        return False
    return importlib.machinery.PathFinder.find_spec(top, [os.getcwd()]) is None


def run_target(options: Options, script: str | None, module: str | None, argv: list[str]) -> int:
    if module is not None and _no_such_module(module):
        # As python -m fails (exit 1), before a session would leave an empty database.
        run_report.say(f"rocprof run: no module named {module.partition('.')[0]!r} (check the "
                       "name, or run from the folder that holds it)")
        return 1
    run_report.begin()
    if options.on_demand:  # registered before its socket can be reached: ctl lists what it reaches
        from .ctl import announce

        announce(options)
    session = Session(options)
    try:
        session.start()
    except (OSError, ValueError, RuntimeError) as e:
        run_report.say(f"rocprof run: {e}")
        run_report.finish()
        return 2
    from .rocprofv3_options import shows_notes

    configured_notes = list(session.notes)  # what each followed child stores as its own
    if options.preload:
        session.notes.append("--preload applies to commands (rocprof run -- CMD); a script runs "
                             "in this process, which has already started")
    for note in session.notes if shows_notes(options.log_level) else ():
        run_report.say(f"rocprof: {note}")
    if options.collection_periods:
        from ..periods import start_collection_periods

        start_collection_periods(options.collection_periods, options.collection_period_unit)
    if options.follow_children:
        from ..children import child_environment

        os.environ.update(child_environment(options, session.settings, configured_notes))

    if module is not None:
        sys.argv = [module, *argv]
        sys.path.insert(0, os.getcwd())
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
    code = 0
    interrupted = False
    from .. import start_up

    start_up.program_starts()
    # What the program leaves behind (its code and globals, or the exception and with it the
    # frames it passed), alive until the session stops: a launch site still being resolved then
    # names frames whose code objects would otherwise be gone, and would lose them.
    held: object = None
    try:
        held = _run_module(module) if module is not None else _run_script(script)
    except SystemExit as e:
        held = e
        code = _exit_code(e)
    except KeyboardInterrupt as e:
        held = e
        _print_user_traceback(e)
        interrupted = True
    except BaseException as e:  # noqa: BLE001 - the user's program failed; report as Python does
        held = e
        _print_user_traceback(e)
        code = 1
    finally:
        flush_std_streams()
        session.stop()
    del held
    # A fork child leaving through here names no database: the launcher lists them all.
    run_report.finish(options)
    if interrupted:
        _die_of_sigint()
    return code


def _run_module(name: str) -> tuple:
    """runpy.run_module(name, run_name="__main__", alter_sys=True), returning the module's code
    with its globals (run_module drops the code)."""
    details = getattr(runpy, "_get_module_details", None)
    run_module_code = getattr(runpy, "_run_module_code", None)
    if details is None or run_module_code is None:
        return (runpy.run_module(name, run_name="__main__", alter_sys=True),)
    _, spec, code = details(name)
    return code, run_module_code(code, None, "__main__", spec)


def _run_script(path: str) -> tuple:
    """runpy.run_path(path, run_name="__main__") for a Python source file, without what run_path
    loads to find out that it is one (pkgutil, and with it typing and weakref: a tenth of the
    launcher's start-up). The source is compiled as run_path compiles it (_source_code) and
    run by runpy's own helper: __main__, sys.argv[0] and the frames the sampler cuts (runpy's
    _run_code) are run_path's; it returns the code with the globals. Anything else (a zip or a
    folder with a __main__.py, a .pyc, a file that cannot be read) goes to run_path, which
    reads it, or fails, as it always did."""
    run_module_code = getattr(runpy, "_run_module_code", None)
    code = _source_code(path) if run_module_code is not None else None
    if code is None:
        return (runpy.run_path(path, run_name="__main__"),)
    return code, run_module_code(code, mod_name="__main__", pkg_name="", script_name=path)


def _source_code(path: str):
    """The file's code object, or None where it is no Python source (a zip archive or compiled
    code has NUL bytes; plain source cannot) or cannot be read. A SyntaxError is the user's, as
    run_path would raise it. Compiled as compile(source, path, "exec", dont_inherit=True)
    compiles it, by the core: the builtin's first use builds the ast module's types, a tenth of
    the launcher's start-up that plain python never pays."""
    try:
        with io.open_code(os.path.abspath(path)) as f:
            source = f.read()
    except OSError:
        return None
    if b"\0" in source:
        return None
    return _core.compile_script(source, path)


def flush_std_streams() -> None:
    """What Python flushes at exit, flushed before the reports or a death by signal (the
    launcher's, and `rocprof run -- CMD`'s); a closed fd (`>&-`) must not turn into an exit
    status of ours."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _die_of_sigint() -> None:
    """An uncaught KeyboardInterrupt: Python ends by SIGINT itself (the shell sees the signal,
    not status 130), and so does the launcher."""
    import signal  # the enum-wrapped module: only for this exit

    flush_std_streams()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
