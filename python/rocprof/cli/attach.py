"""`rocprof attach PID [--duration 10s] [-d DIR] [-o NAME] [options]`: record a process that was
not started by rocprof. The process is armed for on-demand capture (rocprof.attach says how);
with --duration a window is recorded at once and its database's path printed, else `rocprof
ctl start|stop|status PID` controls it from then on."""

from __future__ import annotations

import os
import sys

from .help_text import epilog

EXAMPLES = (
    "rocprof attach 12345 --duration 10s     # 10 s of a running program; prints the database",
    "rocprof attach 12345 -d out/            # arm it; then rocprof ctl start|stop 12345",
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
    p.add_argument("--method", choices=("auto", "remote-exec", "ptrace"), default="auto",
                   help="auto (the default): sys.remote_exec for Python >= 3.14 targets, ptrace "
                        "otherwise")
    # The window options and --duration/--timeout are ctl's.
    add_ctl(_OnlyOptions(p))


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

    options = Options(output_dir=paths.anchored_dir(args.output_directory),
                      output_file=args.output_file, kernel_trace=True, memory_copy_trace=True,
                      default_gpu=True)
    template = os.path.abspath(paths.database_template(options.output_dir, options.output_file))
    settings, _notes = backends.configure(options)
    settings.cupti.library_candidates = ""  # the process finds the libcupti its CUDA matches
    try:
        method = attach.arm(args.pid, template, settings.to_text(), options.to_json(),
                            args.method)
        sock = attach.wait_socket(args.pid)
    except attach.AttachError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"rocprof attach: pid {args.pid} armed ({method}); control socket {sock}",
          file=sys.stderr)
    if args.duration is None:
        print(f"rocprof attach: record with `rocprof ctl start [--duration 10s] {args.pid}`",
              file=sys.stderr)
        return 0
    from . import ctl

    args.action, args.target = "start", str(args.pid)
    return ctl.run(args)
