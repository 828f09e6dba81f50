"""Following child processes that are not forks: Python children started with subprocess,
torchrun ranks, multiprocessing 'spawn' workers. (fork() children are followed by the
native core itself.)

The launcher configures the session once and describes it in ROCPROF_CHILD_SESSION, and puts
rocprof/_child (a sitecustomize) first on PYTHONPATH; each child Python process starts its own
session from that description as it starts up, and closes it at exit. A child never configures
or probes anything itself: the launcher's typed settings (their text form), database template
and options are taken as they are, and only what a process must do for itself runs there (each
capture module's in_child, backends.Backend.in_child). This module's top is light: every
followed child imports it before its program runs (B7).

ROCPROF_CHILD_SESSION holds one `key=value` per line, a newline in a value written as `\\n`
and a backslash as `\\\\`; keys: template, strict, options (JSON, stored as the database's
options), notes (JSON, stored), metadata.TAG, ring_capacity, buffer_budget_mb, commit_ms,
follow_fork, guid_per_row, on_demand, settings (CaptureSettings.to_text()), capture (module
names), python (the launcher's sys.prefix), site_filter, site_prefixes, module_trace,
periods (delay:duration:repeat,...), period_unit.
"""

from __future__ import annotations

import os
import sys

ENV = "ROCPROF_CHILD_SESSION"
_CHILD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _unescape(value: str) -> str:
    # NUL cannot occur in an environment variable: it stands for an escaped backslash here.
    return value.replace("\\\\", "\0").replace("\\n", "\n").replace("\0", "\\")


def encode(values: dict[str, str]) -> str:
    return "\n".join(f"{k}={_escape(v)}" for k, v in values.items())


def decode(text: str) -> dict[str, str]:
    out = {}
    for line in text.split("\n"):
        key, sep, value = line.partition("=")
        if sep:
            out[key] = _unescape(value)
    return out


def child_environment(options, settings, notes: list[str], unique_names: bool = True) -> dict[str, str]:
    """Variables to set in this process so that its Python children are profiled with
    `options` as `settings` (backends.configure) configured them here, `notes` the lines it
    gave. With `unique_names`, a name without %pid% gets "_%pid%" (children of a recording
    process never overwrite its database); `rocprof run -- CMD` records nothing itself: the
    first process to claim the name keeps it, later ones get another (paths.py)."""
    from . import _core, backends, paths

    if settings is None:  # a session that joined another one configured nothing
        settings, notes = backends.configure(options)
    spec = options.as_dict()
    spec["stats"] = spec["summary"] = False  # children never print reports of their own
    spec["output_formats"] = []
    # Children may run in another working directory: anchor the folder to ours.
    spec["output_dir"] = paths.anchored_dir(options.output_dir)
    if unique_names:  # never the parent's database
        spec["output_file"] = paths.per_process_name(options.output_file)
    modules = backends.child_modules(settings)
    values = {
        "template": paths.database_template(spec["output_dir"], spec["output_file"]),
        "strict": _flag(options.no_clobber),
        "options": _core.json_text(spec),
        "notes": _core.json_text(notes) if notes else "",
        "ring_capacity": str(options.ring_capacity),
        "buffer_budget_mb": str(options.buffer_budget_mb),
        "commit_ms": str(options.commit_ms),
        "follow_fork": _flag(options.follow_fork),
        "guid_per_row": _flag(options.guid_per_row),
        "on_demand": _flag(options.on_demand),
        "settings": settings.to_text(),
        "capture": " ".join(modules),
        "python": sys.prefix,
        "module_trace": _flag(options.module_trace),
    }
    from .session import options_metadata

    values.update({f"metadata.{k}": v for k, v in options_metadata(options).items()})
    if options.site_filter is not None:
        values["site_filter"] = options.site_filter
    if {"cupti", "hsa"} & set(modules):  # the launch sites' library code, as found here
        from .capture import site_filter

        values["site_prefixes"] = "\n".join(site_filter.patterns(options.site_filter))
    if options.collection_periods:
        values["periods"] = ",".join(":".join(str(x) for x in p) for p in options.collection_periods)
        values["period_unit"] = options.collection_period_unit
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [_CHILD_DIR, package_root]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    return {ENV: encode(values), "PYTHONPATH": os.pathsep.join(path)}


def _flag(value) -> str:
    return "1" if value else "0"


class ChildSpec:
    """A followed child's view of ROCPROF_CHILD_SESSION, for the capture modules' in_child."""

    def __init__(self, values: dict[str, str]):
        self.values = values
        # The same interpreter as the launcher's: its paths (libcupti candidates, library
        # code, runpy) are the launcher's, found once there.
        self.same_python = values.get("python") == sys.prefix

    def site_prefixes(self) -> str:
        """The site filter's entries (rocprof.capture.site_filter), one per line."""
        if self.same_python and "site_prefixes" in self.values:
            return self.values["site_prefixes"]
        from .capture import site_filter

        return "\n".join(site_filter.patterns(self.values.get("site_filter")))


def _is_resource_tracker() -> bool:
    """multiprocessing's resource tracker (`python -c "from multiprocessing.resource_tracker
    import main; ..."`, started beside spawn and forkserver workers): it runs none of the
    program's code and outlives the program's processes, so it is not followed (it would leave an
    empty database that the run's report finds still open)."""
    if sys.argv[:1] != ["-c"]:
        return False
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return b"multiprocessing.resource_tracker import main" in f.read()
    except OSError:
        return False


def start_child_session(text: str) -> None:
    if _is_resource_tracker():
        return
    values = decode(text)
    from . import _core, native_sqlite, process_hooks

    if _core.active():  # a native library of this process started one already
        return
    native_sqlite.bind()
    settings = _core.CaptureSettings.from_text(values["settings"])
    spec = ChildSpec(values)
    for name in values.get("capture", "").split():
        __import__(f"rocprof.capture.{name}", fromlist=["in_child"]).in_child(settings, spec)
    module_trace = values.get("module_trace") == "1"
    if module_trace:
        from .capture import module_trace as modules

        modules.install()
    metadata = {"rocprof.python": sys.version.split()[0]}
    if _core.ranked():  # rocprof.rank only for a ranked process: a torchrun agent is no rank 0
        metadata["rocprof.rank"] = _core.rank()
    if values.get("notes"):
        metadata["rocprof.notes"] = values["notes"]
    metadata.update({k[len("metadata."):]: v for k, v in values.items()
                     if k.startswith("metadata.")})
    on_demand = values.get("on_demand") == "1"
    kwargs = dict(argv=sys.argv, strict=values.get("strict") == "1",
                  options_json=values.get("options", "{}"), metadata=metadata,
                  ring_capacity=int(values["ring_capacity"]),
                  buffer_budget_mb=int(values["buffer_budget_mb"]),
                  commit_ms=int(values["commit_ms"]),
                  follow_fork=values.get("follow_fork") == "1", settings=settings,
                  guid_per_row=values.get("guid_per_row") == "1")
    if on_demand:
        _core.arm_on_demand(values["template"], **kwargs)
    else:
        # The schema is written by the drain thread while the program starts: a child's
        # program runs whether or not its database can be made.
        _core.start_session(values["template"], open_on_drain_thread=True, **kwargs)
    process_hooks.install(True)
    if values.get("periods"):
        from .periods import start_collection_periods

        periods = []
        for period in values["periods"].split(","):
            delay, duration, repeat = period.split(":")
            periods.append((float(delay), float(duration), int(repeat)))
        start_collection_periods(periods, values.get("period_unit", "sec"))

    def end() -> None:
        # The program is leaving: a second Ctrl-C must not cut the database's close short (the
        # stop has its own deadline) nor print our frames. Python's exit after an unhandled
        # KeyboardInterrupt restores SIGINT's default to die of it.
        # The C module: `signal` wraps it in enum, and with threading for the thread check
        # that import was a third of a child's added instructions, at its exit (B7). It says
        # itself when this is not the main thread (ValueError), as the check did.
        try:
            import _signal
        except ImportError:  # not CPython
            import signal as _signal
        try:
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        except ValueError:  # another thread, or a subinterpreter: SIGINT is not ours to set
            pass
        if _core.active():
            _core.stop_session()
        if on_demand:
            _core.disarm_on_demand()
        process_hooks.install(False)
        if module_trace:
            from .capture import module_trace as modules

            modules.uninstall()
        # An image the launcher exec()ed (same pid) ends the run: it names its databases. Any
        # other child never loads the exit report's module.
        if _core.is_run_launcher():
            from . import run_report

            run_report.finish()

    import atexit

    atexit.register(end)
