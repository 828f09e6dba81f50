"""`rocprof attach PID [--duration 10s] [-d DIR] [-o NAME] [options]`: record a process that was
not started by rocprof. The process is armed for on-demand capture (rocprof.attach says how);
with --duration a window is recorded at once and its database's path printed, else `rocprof
ctl start|stop|status PID` controls it from then on. With --method read-only (or where `auto`
finds injection refused) its Python stacks are sampled from outside for --duration (else until
Ctrl-C or its end) instead."""

from __future__ import annotations

import os
import sys

from .. import control, option_table
from ..attach import AttachError, readonly
from .help_text import epilog

EXAMPLES = (
    "rocprof attach 12345 --duration 10s     # 10 s of a running program; prints the database",
    "rocprof attach 12345 -d out/            # arm it; then rocprof ctl start|stop 12345",
    "rocprof attach 12345 --method read-only --duration 5s --sample 200   # as py-spy --pid",
)


def add_parser(p) -> None:
    from .ctl import add_parser as add_ctl

    p.epilog = epilog(examples=EXAMPLES)
    p.add_argument("pid", type=int, help="the process to record")
    p.add_argument("-d", "--output-directory", default=None, metavar="DIR",
                   help="where its databases go (default: rocprof-output/%%hostname%% here)")
    p.add_argument("-o", "--output-file", default=None, metavar="NAME",
                   help="database name (placeholders as rocprof run; default %%pid%%); windows "
                        "add _w<k>")
    p.add_argument("--method", choices=("auto", "remote-exec", "ptrace", "read-only"),
                   default="auto",
                   help="auto (the default): sys.remote_exec for Python >= 3.14 targets, ptrace "
                        "otherwise; read-only where that is refused or not possible, or when "
                        "only --sample is asked of a Python < 3.14. read-only: sample the "
                        "Python stacks from outside, running no code in the process (as py-spy "
                        f"--pid; Python stacks only, --sample HZ default {readonly.DEFAULT_HZ})")
    # The window options and --duration/--timeout are ctl's; --sampling-mode is run's.
    add_ctl(_OnlyOptions(p))
    mode = option_table.by_name("--sampling-mode")
    p.add_argument(*mode.names, help=mode.help + " (read-only: cpu samples the threads the "
                   "kernel shows running at each tick)", **mode.argparse)


class _OnlyOptions:
    """ctl's parser less its positional arguments."""

    def __init__(self, p):
        self._p = p
        self.epilog = None

    def add_argument(self, *names, **kw):
        if names and names[0].startswith("-"):
            return self._p.add_argument(*names, **kw)
        return None

    def add_argument_group(self, *a, **kw):
        return self._p.add_argument_group(*a, **kw)


def run(args) -> int:
    from .. import attach, backends, paths
    from ..options import Options
    from . import ctl

    options = Options(output_dir=paths.anchored_dir(args.output_directory),
                      output_file=args.output_file)
    options.trace_gpu_by_default()
    template = os.path.abspath(paths.database_template(options.output_dir, options.output_file))
    gpu_options = ctl.window_flags(args)
    method = args.method
    try:
        if method == "auto":
            reason = attach.read_only_reason(args.pid, args.sample is not None and not gpu_options)
            if reason is not None:
                print(reason, file=sys.stderr)
                method = "read-only"
        if method != "read-only":
            settings, _notes = backends.configure(options)
            settings.cupti.library_candidates = ""  # the process finds the libcupti its CUDA matches
            try:
                method = attach.arm(args.pid, template, settings.to_text(), options.to_json(),
                                    method)
            except attach.InjectionRefused as e:
                if args.method != "auto" or attach.python_version_of(args.pid) is None:
                    raise
                print(f"{e}; sampling its Python stacks read-only instead", file=sys.stderr)
                method = "read-only"
        if method == "read-only":
            return _read_only(args, options, template, gpu_options)
        sock = attach.wait_socket(args.pid)
    except attach.AttachError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"rocprof attach: pid {args.pid} armed ({method}); control socket {sock}",
          file=sys.stderr)
    why = control.register(ctl.run_folder(args.output_directory), pid=args.pid)
    if why is not None:
        print(f"rocprof attach: `rocprof ctl` finds pid {args.pid} only by its pid: {why}",
              file=sys.stderr)
    if args.duration is None:
        print(f"rocprof attach: record with `rocprof ctl start [--duration 10s] {args.pid}`",
              file=sys.stderr)
        return 0
    args.action, args.target = "start", str(args.pid)
    return ctl.run(args)


def _read_only(args, options, template: str, gpu_options: list[str]) -> int:
    """Samples the process from outside; its database's path on stdout."""
    if gpu_options:
        raise AttachError(f"rocprof attach: read-only sampling records Python stacks only: "
                          f"{gpu_options[0]} "
                          "needs our library in the process (--method ptrace or remote-exec)")
    # --sample alone: the read-only sampler's own default rate
    hz = readonly.DEFAULT_HZ if args.sample in (None, option_table.DEFAULT_RATE) else args.sample
    if not 1 <= hz <= 100_000:
        raise AttachError(f"rocprof attach: --sample must be between 1 and 100000 Hz, not {hz}")
    options.sample, options.sampling_mode = hz, args.sampling_mode
    options.marker_trace = options.kernel_trace = options.memory_copy_trace = False
    options.default_gpu = False
    path = readonly.sample(args.pid, template, hz, args.sampling_mode == "wall", args.duration,
                           options.to_json())
    print(path, flush=True)
    return 0
