"""The Perfetto trace beside the report. Writing it and analysing the run each read every kernel
once and each keeps one core busy, so for a large run the trace is written by a process of its
own while this one analyses (the page needs only the trace's file name and whether it was
written); a small run's trace is written here first, where starting an interpreter would cost
more than it saves, and so is any run where a second process cannot help (one core) or cannot
open the same files (a connection without paths)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile

from ..analysis.chunks import stored_kernels
from ..errors import RocpdError
from ..export import perfetto
from ..io.connection import Connection
from ..summary.fastagg import _usable_cpus

# Kernel rows above which the trace gets a process of its own: where the analysis starts to
# sweep (rocpd.analysis.streamed.STREAM_ABOVE) and each pass takes seconds.
PARALLEL_ABOVE = 500_000


def _kernel_rows_above(db, n: int) -> bool:
    """Whether the files hold more than ``n`` kernel rows, counting no further than that."""
    left = n
    for src in db.sources():
        for part in src.parts:
            left -= stored_kernels(src.conn, part.guid, left)
            if left < 0:
                return True
    return False


def write_here(db, path: str, filters: dict) -> tuple[str | None, str]:
    """(path, "") once written, or (None, why not): the report is still worth having without
    its trace."""
    try:
        perfetto.write(db, path, **filters)
    except (RocpdError, OSError) as e:
        return None, f"no Perfetto trace written: {e}"
    return path, ""


def _main() -> None:
    """The trace's process: (paths, trace path, filters) pickled on stdin, (path or None, note)
    pickled on stdout."""
    # Cancelled (SIGTERM): unwind, so that the trace's staged file is removed as on any error.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    out = os.fdopen(os.dup(1), "wb")  # the result's channel; anything printed goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        paths, path, filters = pickle.load(sys.stdin.buffer)
        with Connection(*paths) as db:
            got = write_here(db, path, filters)
    except BaseException as e:  # anything else still reaches the parent, which says it
        got = (None, f"no Perfetto trace written: {type(e).__name__}: {e}")
    pickle.dump(got, out)
    out.flush()


# The child's imports come from the parent's sys.path, set before anything is imported: `-c`
# puts the current folder first, where a rocpd/ (ROCm's own package) or a pickle.py would win.
_BOOT = "import sys; sys.path[:] = {path!r}; from rocpd.report.trace_job import _main; _main()"


class TraceJob:
    """A trace being written; :meth:`result` waits for it. The process is a fresh interpreter
    running this module, not a multiprocessing child: that would import the caller's script
    again (a notebook's or a script's report without a ``__main__`` guard would run twice).
    Where it cannot be started, the trace is written here first, as for a small run."""

    def __init__(self, db, path: str, filters: dict, above: int | None = None):
        self._done: tuple[str | None, str] | None = None
        self._proc = self._err = None
        above = PARALLEL_ABOVE if above is None else above
        try:
            if _apart(db, above):
                self._start(db.paths, path, filters)
                return
        except Exception:  # no process, or one that could not be given its work (unpicklable)
            self._stop()
            self._proc = None
        self._done = write_here(db, path, filters)

    def _start(self, paths, path: str, filters: dict) -> None:
        self._err = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT.format(path=[p for p in sys.path if p])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err)
        pickle.dump((list(paths), path, filters), self._proc.stdin)
        self._proc.stdin.close()

    @property
    def parallel(self) -> bool:
        return self._proc is not None

    def result(self) -> tuple[str | None, str]:
        """(path, "") or (None, why it was not written), once the trace is finished."""
        if self._done is None:
            data = self._proc.stdout.read()
            code = self._proc.wait()
            try:
                self._done = pickle.loads(data)
            except Exception:  # the process died without a word (killed, out of memory)
                self._done = (None, f"no Perfetto trace written: its process ended with code"
                                    f" {code}{self._last_error()}")
            self._close()
        return self._done

    def cancel(self) -> None:
        """Stop a trace still being written (the report failed); its staged file goes too,
        unless it does not unwind within seconds (inside a long SQLite step), then killed."""
        if self._proc is not None and self._done is None:
            self._stop()
            self._done = (None, "cancelled")

    def _stop(self) -> None:
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._close()

    def _close(self) -> None:
        for f in (self._proc.stdin, self._proc.stdout, self._err):
            if f is not None and not f.closed:
                f.close()

    def _last_error(self) -> str:
        self._err.seek(0)
        lines = [ln for ln in self._err.read().decode(errors="replace").splitlines() if ln.strip()]
        return f" ({lines[-1].strip()})" if lines else ""


def _apart(db, above: int) -> bool:
    """Whether the trace goes to a process of its own."""
    return bool(getattr(db, "paths", None)) and _usable_cpus() > 1 \
        and _kernel_rows_above(db, above)
