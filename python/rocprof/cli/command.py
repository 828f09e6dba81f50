"""`rocprof run [options] -- CMD [args]`: profile any program, as rocprofv3 does.

The command runs as a child process with the terminal, stdin/stdout/stderr and environment of
the launcher, plus what makes each process it starts record into its own database:

- Python processes: the sitecustomize of rocprof/_child (the child-following mechanism of
  in-process runs), so every option of the in-process path applies (GPU launch sites,
  sampling, ROCTx from Python);
- native programs: LD_LIBRARY_PATH puts our libroctx64.so first, so `dlopen("libroctx64.so")`,
  Julia's `@ccall "libroctx64"` and `-lroctx64` resolve to it, and its constructor starts a
  session from ROCPROF_AUTOSTART_*; CUDA programs that never load it are traced through the
  CUDA driver's injection hook (CUDA_INJECTION64_PATH -> librocprof_inject.so), as `nsys
  profile ./app` does. LD_PRELOAD gets librocprof_exec.so (libc only, it records nothing
  itself): an exec*() in a process that records closes its database first, whatever library
  started the session (libroctx64 linked in does it too; an injected tool library or a
  dlopen()ed libroctx64 cannot interpose on the program's calls).

Each process lists its database in the run manifest; the launcher prints them all at the end
(run_report.py).
The command's exit status passes through, death by a signal too (the launcher dies of the
same signal), and signals sent to the launcher are forwarded to the command.
"""

from __future__ import annotations

import os
import signal

from .. import backends, paths, run_report
from .._libs import library_dir
from ..children import child_environment
from ..options import Options
from .target import flush_std_streams

# Signals a supervisor forwards (SIGKILL and SIGSTOP cannot be caught).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGCONT, signal.SIGWINCH)
_TTY_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGWINCH)
# Preloaded into the command's processes (cpp/inject/exec_preload.cpp).
EXEC_LIBRARY = "librocprof_exec.so"


def command_environment(options: Options) -> tuple[dict[str, str], list[str]]:
    """The child's environment (the run manifest's variables included: run_report.begin()),
    and notes for the user (options that cannot apply)."""
    env = dict(os.environ)
    notes: list[str] = []
    settings, more = backends.configure(options)
    if not options.follow_children:
        notes.append("--no-follow-children: only ROCTx-annotated native programs and CUDA "
                     "programs are profiled, not Python processes")
    else:  # before child_environment below changes the settings for native processes
        env.update(child_environment(options, settings, more, unique_names=False))
    notes += more
    if options.sample is not None:
        notes.append("--sample: call stacks are sampled in the Python processes the command "
                     "starts; native programs are not sampled (the sampler needs an interpreter)")
    # Each process expands and claims the name itself (its own %pid%, %rank%); checked here
    # with the launcher's values so that a bad path fails before the command starts.
    template = paths.database_template(options.output_dir, options.output_file)
    paths.check(template, strict=options.no_clobber)
    # Each backend's part (the HSA tool's variables, CUDA's injection hook ...); it may change
    # the settings native processes read, so before they are written below.
    backend_notes = backends.child_environment(options, settings, env)
    libs = library_dir()
    env.update({
        "ROCPROF_AUTOSTART_OUTPUT": os.path.abspath(template),
        "ROCPROF_AUTOSTART_OPTIONS": settings.to_text(),
        "ROCPROF_AUTOSTART_OPTIONS_JSON": options.to_json(),
        "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [libs, env.get("LD_LIBRARY_PATH")])),
    })
    if options.no_clobber:
        env["ROCPROF_AUTOSTART_STRICT"] = "1"
    if options.on_demand:  # native programs arm themselves (session/control.hpp)
        env["ROCPROF_AUTOSTART_ON_DEMAND"] = "1"
    preloads = _preloads(env.get("LD_PRELOAD", ""), libs)
    if not os.path.isfile(os.path.join(libs, EXEC_LIBRARY)):
        notes.append(f"{EXEC_LIBRARY} is missing from {libs} (reinstall rocprof): an exec*() in a"
                     " native program that does not link libroctx64 loses what it recorded last")
    if options.preload or preloads:
        env["LD_PRELOAD"] = " ".join([*options.preload, *preloads])
    if options.collection_periods:
        notes.append("-P: Python processes of the command follow the collection periods; native "
                     "programs record from their start")
    return env, notes + backend_notes


def _preloads(current: str, libs: str) -> list[str]:
    """LD_PRELOAD's entries after the user's --preload: those already there, then our exec
    library once. The loader splits the variable at spaces and colons, so a library under a
    folder whose path has one is named by its file name (found through LD_LIBRARY_PATH)."""
    entries = current.replace(":", " ").split()
    ours = os.path.join(libs, EXEC_LIBRARY)
    if not os.path.isfile(ours) or any(os.path.basename(e) == EXEC_LIBRARY for e in entries):
        return entries  # a missing library would make the loader complain in every process
    entries.append(EXEC_LIBRARY if any(c.isspace() or c == ":" for c in ours) else ours)
    return entries


def _terminal_foreground(tty: int | None) -> bool:
    """Whether our process group is the foreground group of our controlling terminal: then a
    key (Ctrl-C, Ctrl-\\) or a resize signalled the command too, and forwarding would double it."""
    try:
        return tty is not None and os.tcgetpgrp(tty) == os.getpgrp()
    except OSError:
        return False


def _forwarder(proc, tty: int | None):
    def forward(signum, _frame):
        if tty is None:
            # The command leads its own group (see _own_group): the signal reaches it, its
            # children and theirs once, whether it was sent to the launcher or to our group.
            try:
                os.killpg(proc.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass
            return
        if signum in _TTY_SIGNALS and _terminal_foreground(tty):
            return
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass
    return forward


def _own_group():
    """Without a controlling terminal, the command leads a process group of its own: a signal to
    our group (kill -INT -PGID, a supervisor's group kill) would otherwise reach it twice, once
    sent and once forwarded, and a second Ctrl-C-like SIGINT interrupts the program's own
    clean-up. The launcher's death still takes the command with it (PR_SET_PDEATHSIG), as a
    SIGKILL to the shared group did. With a terminal the group stays shared: job control and
    the terminal's keys need the command in the launcher's group."""
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    launcher = os.getpid()

    def in_child():
        os.setpgid(0, 0)
        prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if os.getppid() != launcher:  # the launcher died before the line above
            os._exit(128 + signal.SIGKILL)
    return in_child


def _controlling_terminal() -> int | None:
    try:
        return os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None


def run_command(options: Options, argv: list[str]) -> int:
    import subprocess

    run_report.begin()
    try:
        env, notes = command_environment(options)
    except (ValueError, OSError) as e:
        run_report.say(f"rocprof run: {e}")
        run_report.finish()
        return 2
    from .rocprofv3_options import shows_notes

    for note in notes if shows_notes(options.log_level) else ():
        run_report.say(f"rocprof: {note}")
    if options.on_demand:
        from .ctl import announce

        announce(options)
    tty = _controlling_terminal()
    try:
        proc = subprocess.Popen(argv, env=env, preexec_fn=None if tty is not None else _own_group())
    except OSError as e:
        if tty is not None:
            os.close(tty)
        run_report.say(f"rocprof run: cannot start {argv[0]!r}: {e.strerror}")
        run_report.finish()
        return 127 if isinstance(e, FileNotFoundError) else 126
    previous = {s: signal.signal(s, _forwarder(proc, tty)) for s in FORWARDED}
    try:
        code = proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if tty is not None:
            os.close(tty)
    run_report.finish(options)
    if code < 0:  # died of a signal: so does the launcher, as a shell would see it
        flush_std_streams()
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code
