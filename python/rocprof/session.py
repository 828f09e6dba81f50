"""The in-process API: profile a block of code into a rocpd database.

    with rocprof.profile(output_dir="out", kernel_trace=True) as s:
        train()
    print(s.path)
"""

from __future__ import annotations

import os
import sys

from . import _core, backends, native_sqlite, paths, process_hooks
from .options import Options


class Session:
    """One profiling session of this process (at most one runs at a time)."""

    def __init__(self, options: Options | None = None, **kwargs):
        self.options = options or Options()
        for key, value in kwargs.items():
            if not hasattr(self.options, key):
                raise TypeError(f"rocprof.profile() got an unknown option {key!r}")
            setattr(self.options, key, value)
        self.path: str | None = None
        self.notes: list[str] = []
        self.settings = None  # rocprof._core.CaptureSettings, as configured at start
        self._pid: int | None = None
        self.joined = False  # started inside a running session: a range of it (see _join)
        self._range_open = False
        self.control_socket: str | None = None  # --on-demand: this process's rocprof ctl socket

    def start(self) -> str:
        if _core.active():
            return self._join()
        native_sqlite.bind()
        template = paths.database_template(self.options.output_dir, self.options.output_file)
        self.settings, self.notes = backends.configure(self.options)
        if self.options.module_trace:
            from .capture import module_trace

            module_trace.install()
        # --on-demand: the same configuration, kept for the windows `rocprof ctl` starts.
        begin = _core.arm_on_demand if self.options.on_demand else _core.start_session
        started = begin(
            template,
            argv=paths.argv(),
            strict=self.options.no_clobber,
            options_json=self.options.to_json(),
            # rocprof.rank only for a ranked process: a torchrun agent is no rank 0.
            metadata={"rocprof.python": sys.version.split()[0],
                      **({"rocprof.rank": paths.rank()} if paths.ranked() else {}),
                      # what was asked for but cannot be recorded here, for the readers
                      **({"rocprof.notes": _core.json_text(self.notes)} if self.notes else {}),
                      **options_metadata(self.options)},
            ring_capacity=self.options.ring_capacity,
            buffer_budget_mb=self.options.buffer_budget_mb,
            commit_ms=self.options.commit_ms,
            follow_fork=self.options.follow_fork,
            settings=self.settings,
            guid_per_row=self.options.guid_per_row,
        )
        if self.options.on_demand:
            self.control_socket = started
        else:
            self.path = started
        self._pid = os.getpid()
        process_hooks.install(True)
        return self.path

    @property
    def forked(self) -> bool:
        """True in a fork() child of the process that started this session: the native core
        records the child into a database of its own (see path)."""
        return self._pid is not None and os.getpid() != self._pid

    def _join(self) -> str:
        """A session already runs (the script is under `rocprof run`, or profile() nests):
        this one becomes a ROCTx range of it, named after its output file or "rocprof.profile",
        instead of failing. Its options cannot change what the running session records."""
        self.joined = self._range_open = True
        self.path = _core.path()
        self._range_name = self.options.output_file or "rocprof.profile"
        _core.push(self._range_name)
        self.notes = [f"rocprof.profile() joined the running session ({self.path}) as the range "
                      f"{self._range_name!r}; its own options are not applied"]
        return self.path

    def stop(self) -> None:
        if self.joined:
            if self._range_open and _core.active():
                _core.pop()
            self._range_open = False
            return
        if _core.active():
            if self.forked:
                self.path = _core.path()  # the child's own database, not the parent's
            _core.stop_session()
        if self.control_socket is not None:
            _core.disarm_on_demand()
            self.control_socket = None
        process_hooks.install(False)
        if self.options.module_trace:
            from .capture import module_trace

            module_trace.uninstall()

    def __enter__(self) -> Session:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def profile(output_dir: str | None = None, output_file: str | None = None, **options) -> Session:
    """A Session for `with`: records ROCTx ranges always, other sources as asked
    (kernel_trace=True, memory_copy_trace=True, runtime_trace=True, sample=1000, ...)."""
    return Session(output_dir=output_dir, output_file=output_file, **options)


def options_metadata(options) -> dict:
    """Metadata the options alone decide (each followed child stores it too). --rccl-trace:
    "kernels only" until NCCL loads the plugin, which replaces the row."""
    if "collectives" not in options.activities():
        return {}
    from .capture import nccl

    return {nccl.METADATA_TAG: nccl.NOT_LOADED}
