"""`rocprof ctl start|stop|status [--duration 10s] [DIR|PID]`: control the processes of a
`rocprof run --on-demand` run.

Each process of such a run (the program, its Python children, torchrun ranks, native programs
using libroctx64 or CUDA) serves a socket at <output folder>/.rocprof-ctl/<pid>.sock
(session/control.hpp says the protocol). `ctl` finds every socket under DIR or the one of
PID (a run's launcher: every socket of its run); with neither, under the folder of each of the
user's live runs (each registers itself: rocprof/control.py), else under the default output
folder here. It sends the request to all of them at once, each on its own thread. A window's
database is finished by the process's own writer thread; its absolute path is printed (stdout,
one per process) when it is complete.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading

from .. import _core, backends, control, paths, run_report
from .. import option_table as table
from ..control import FOLDER, socket_of_pid
from .errors import UsageError
from .help_text import epilog
from .run_parser import help_of

EXAMPLES = (
    "rocprof ctl start --duration 10s           # 10 s of each process of your --on-demand run",
    "rocprof ctl status                         # your live --on-demand runs and their processes",
    "rocprof ctl start rocprof-output/          # start a window ...",
    "rocprof ctl stop rocprof-output/           # ... and end it: the databases' paths",
    "rocprof ctl status 12345                   # one process, by pid",
)

WINDOW_HELP = (
    "The run's own options (rocprof run --help), each turning on for this window what it "
    "names: a GPU backend the run left off stays off, ROCTx ranges are always recorded and "
    "collectives follow the run's --rccl-trace."
)


def add_parser(p) -> None:
    p.epilog = epilog(examples=EXAMPLES)
    p.usage = "rocprof ctl {start,stop,status} [DIR|PID] [--duration TIME] [window options]"
    # One positional list, continued after options by the dispatcher (cli/__init__.py).
    p.add_argument("words", nargs="+", metavar="start|stop|status [DIR|PID]",
                   help="start a window, stop it (the databases' paths are printed when "
                        "complete), or list the processes and their state; of the run under "
                        "DIR (its -d) or of one process (a run's launcher: the whole run); "
                        "without either, of your live --on-demand run (status: of each)")
    p.add_argument("--duration", type=parse_duration, default=None, metavar="TIME",
                   help="start: end the window after TIME (10s, 500ms, 2m; a number is "
                        "seconds) and wait for its databases")
    p.add_argument("--timeout", type=parse_duration, default="120s", metavar="TIME",
                   help="how long to wait for a process to answer (after --duration; default "
                        "120s)")
    tr = p.add_argument_group("window options (added to what the run was given)", WINDOW_HELP)
    for option in table.window_options():
        if option.kind == "rate":
            tr.add_argument(*option.names, nargs="?", const=table.DEFAULT_RATE, type=int,
                            help=help_of(option), **option.argparse)
        else:  # bool: what a window adds is on, so the flag alone says it
            tr.add_argument(*option.names, action="store_true", help=help_of(option),
                            **option.argparse)


def parse_duration(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*", text)
    if m is None or float(m.group(1)) <= 0:
        raise ValueError(f"expected a time like 10s, 500ms, 2m, not {text!r}")
    return float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2) or "s"]


parse_duration.__name__ = "TIME"


def window_flags(args) -> list[str]:
    """The window's tracing options given (each one's long name), for `rocprof attach`."""
    return [o.names[-1] for o in table.window_options()
            if o.kind == "bool" and getattr(args, o.dest, False)]


def window_settings(args) -> list[str]:
    """The settings lines (capture/settings.hpp keys) the window's options add to the run's: a
    GPU backend's section is its name, each activity it supports one key."""
    asked = table.activities(args)
    lines = [f"{b.name}.{a}=1" for b in backends.BACKENDS if b.gpu for a in b.activities
             if a in asked]
    if "samples" in asked:
        hz = _core.SamplingSettings.DEFAULT_HZ if args.sample is table.DEFAULT_RATE else args.sample
        if not 1 <= hz <= 100_000:
            raise UsageError(f"rocprof ctl: --sample must be between 1 and 100000 Hz, not {hz}")
        lines.append(f"sampling.hz={hz}")
    if "gpu_metrics" in asked:
        lines.append(f"gpu_metrics.hz={_core.GpuMetricsSettings.DEFAULT_HZ}")
    return lines


def run_folder(output_dir: str | None) -> str:
    """The part of the run's output folder without placeholders: where `ctl` looks."""
    parts = paths.anchored_dir(output_dir).split(os.sep)
    for i, part in enumerate(parts):
        if "%" in part:
            parts = parts[:i]
            break
    return os.sep.join(parts) or os.sep


def announce(options) -> None:
    """The launcher's line for an --on-demand run: how to start a window. The run is registered
    for `rocprof ctl` without a folder while this process lives."""
    folder = run_folder(options.output_dir)
    run_report.say(f"rocprof: --on-demand: nothing is recorded until `rocprof ctl start "
                   f"[--duration 10s] {folder}`")
    why = control.register(folder)
    if why is not None:
        run_report.say(f"rocprof: --on-demand: `rocprof ctl` finds this run only by its folder "
                       f"or a pid: {why}")


def _registered() -> list[control.Run]:
    """The user's live runs; none (with a line saying why) where the registry is not safe."""
    try:
        return control.live_runs()
    except control.RegistryError as e:
        print(f"rocprof ctl: the register of runs is not used: {e}", file=sys.stderr)
        return []


def find_sockets(target: str | None) -> list[str]:
    """Every control socket under the folder `target`, or the one of process `target`."""
    if target is not None and target.isdigit() and not os.path.isdir(target):
        try:
            return socket_of_pid(int(target))
        except FileNotFoundError:
            # A run's launcher (rocprof run -- CMD) serves no socket: its processes do.
            run = next((r for r in _registered() if r.pid == int(target)), None)
            if run is None:
                raise
            target = run.folder
    top = os.path.abspath(target if target is not None else run_folder(None))
    if not os.path.isdir(top):
        where = ("no live --on-demand run of yours is registered, and " if target is None
                 else "")
        raise FileNotFoundError(f"rocprof ctl: {where}{top} is not a folder (give the run's -d "
                                "folder or a pid)")
    found = []
    for root, dirs, files in os.walk(top):
        if os.path.basename(root) == FOLDER:
            found += [os.path.join(root, f) for f in files if f.endswith(".sock")]
            dirs[:] = []
    return sorted(found)


def request(path: str, lines: list[str], timeout: float, on_line) -> None:
    """Send one request to the socket at `path`; on_line(text) for each answer line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(("\n".join(lines) + "\n\n").encode())
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                on_line(line.decode(errors="replace"))


def _action_and_target(args) -> None:
    if not hasattr(args, "words"):
        return  # set by the caller (rocprof attach)
    words = args.words
    if words[0] not in ("start", "stop", "status") or len(words) > 2:
        raise UsageError(f"rocprof ctl: expected start, stop or status and at most one DIR or "
                         f"PID, not {' '.join(words)!r}")
    args.action, args.target = words[0], (words[1] if len(words) == 2 else None)


def run(args) -> int:
    _action_and_target(args)
    runs = _registered() if args.target is None else []
    if len(runs) > 1 and args.action != "status":
        listed = "; ".join(f"pid {r.pid} under {r.folder}" for r in runs)
        print(f"rocprof ctl: {len(runs)} --on-demand runs of yours are live ({listed}): name "
              f"one, rocprof ctl {args.action} DIR|PID", file=sys.stderr)
        return 2
    if not runs:
        return _control(args, args.target)
    codes = []
    for r in runs:
        if args.action == "status":
            print(f"run {r.pid} under {r.folder}: {r.command}", flush=True)
        codes.append(_control(args, r.folder))
    return max(codes)


def _control(args, target: str | None) -> int:
    """The request to every process of the run under `target` (a folder or a pid)."""
    try:
        sockets = find_sockets(target)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    if not sockets:
        where = target or run_folder(None)
        print(f"rocprof ctl: no process of an --on-demand run found under {where}",
              file=sys.stderr)
        return 2
    if args.action == "start":
        ms = int(args.duration * 1000) if args.duration else 0
        lines = [f"start {max(ms, 1) if args.duration else 0}", *window_settings(args)]
    else:
        lines = [args.action]
    timeout = args.timeout + (args.duration or 0.0)
    out_lock = threading.Lock()
    failed: list[str] = []
    ended: list[str] = []
    starts: list[int] = []  # each window's start (CLOCK_BOOTTIME ns, as its database has it)

    def one(path: str) -> None:
        pid = os.path.basename(path)[: -len(".sock")]

        def on_line(text: str) -> None:
            word, _, rest = text.partition(" ")
            with out_lock:
                if word == "started":
                    k, t0, db = rest.split(" ", 2)
                    starts.append(int(t0))
                    print(f"rocprof ctl: pid {pid}: window {k} recording into {db}",
                          file=sys.stderr)
                elif word == "stopped":
                    print(rest.split(" ", 2)[2], flush=True)
                elif word == "status":
                    fields = rest.split(" ")
                    if fields[1] == "recording":
                        print(f"pid {fields[0]}: recording window {fields[2]} into "
                              f"{' '.join(fields[3:])}", flush=True)
                    else:
                        print(f"pid {fields[0]}: idle ({fields[2]} windows recorded)",
                              flush=True)
                else:
                    failed.append(pid)
                    print(f"rocprof ctl: pid {pid}: {rest if word == 'error' else text}",
                          file=sys.stderr)

        try:
            request(path, lines, timeout, on_line)
        except (ConnectionRefusedError, FileNotFoundError):
            # The process ended without removing its socket (killed): nothing listens there.
            with out_lock:
                ended.append(pid)
                try:
                    os.unlink(path)
                    note = "its left-over socket removed"
                except OSError:
                    note = f"its socket {path} is left over"
                print(f"rocprof ctl: pid {pid} has ended ({note})", file=sys.stderr)
        except OSError as e:
            with out_lock:
                failed.append(pid)
                print(f"rocprof ctl: pid {pid}: {path}: {e.strerror or e}", file=sys.stderr)

    threads = [threading.Thread(target=one, args=(p,)) for p in sockets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(starts) > 1:
        print(f"rocprof ctl: {len(starts)} windows started within "
              f"{(max(starts) - min(starts)) / 1e6:.1f} ms of each other", file=sys.stderr)
    if len(ended) == len(sockets):
        print("rocprof ctl: every process of the run has ended", file=sys.stderr)
        return 2
    return 1 if failed else 0
