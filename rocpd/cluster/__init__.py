"""rocpd on Dask: the summaries of :mod:`rocpd` (kernel, copy, allocation, API and ROCTx stats,
busy time, time windows, filters, per-rank tables) computed by Dask workers, one task per database
(and per rowid range of a large kernel table), with the partial aggregates reduced exactly on the
client: the numbers equal the local path's to the last nanosecond and call.

    db = rocpd.connect("run/", dask=True)               # a LocalCluster on this machine
    db = rocpd.connect("run/", dask="tcp://head:8786")  # a running scheduler
    db.kernel_stats(); rocpd.summary.stats.format_summary(db); rocpd.ranks.analyze(db)

``dask=True`` uses $DASK_SCHEDULER_ADDRESS when it is set. Workers open the files where they are
(a shared file system, or the same paths on every node); the client itself opens none, so a
path the client cannot see is handed to the workers as it is. Needs ``pip install 'rocprof[dask]'``
(dask and distributed).
"""

from __future__ import annotations

import os
import sys
import warnings

from ..errors import RocpdError
from ..io.connection import Connection, FramesAPI
from ..io.files import _flatten, expand_paths
from ..progress import Bar
from ..summary.fastagg import _usable_cpus
from . import worker

INSTALL_HINT = "pip install 'rocprof[dask]' (dask and distributed)"


def _require():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError as e:
        raise RocpdError(f"the Dask backend needs dask and distributed ({e.name} is not installed):"
                         f" {INSTALL_HINT}") from None
    return distributed


def usable_cpus() -> int:
    return _usable_cpus()


def client_for(dask=True, workers: int | None = None, quiet: bool = False):
    """(client, cluster we started or None, whether the client is ours to close) for ``dask``: True
    (LocalCluster, or the scheduler at $DASK_SCHEDULER_ADDRESS), an address string, or a
    ``distributed.Client`` (used as it is, and left open)."""
    distributed = _require()
    if isinstance(dask, distributed.Client):
        return dask, None, False
    address = dask if isinstance(dask, str) else os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    if address:
        try:
            client = distributed.Client(address, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise RocpdError(f"cannot reach the Dask scheduler at {address} ({' '.join(str(e).split())});"
                             " start one (dask scheduler; dask worker ADDRESS) or leave out"
                             " --scheduler/DASK_SCHEDULER_ADDRESS for a local cluster") from None
        if not quiet:
            n = len(client.scheduler_info().get("workers", {}))
            print(f"rocpd: dask: scheduler {address}, {n} worker(s)", file=sys.stderr)
        return client, None, True
    import logging

    # One single-threaded process per core: scans are SQLite and numpy under the GIL.
    n = workers or usable_cpus()
    with warnings.catch_warnings():  # "port 8787 is in use": another cluster's, any port will do
        warnings.simplefilter("ignore", UserWarning)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=_dashboard(),
                                           silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    if not quiet:
        link = f", dashboard {client.dashboard_link}" if _dashboard() else ""
        print(f"rocpd: dask: local cluster of {n} worker process(es){link}", file=sys.stderr)
    return client, cluster, True


def _dashboard():
    try:
        import bokeh  # noqa: F401  (the dashboard needs it; without it, no dashboard and no warning)
    except ImportError:
        return None
    return ":0"


def _expand(paths) -> list[str]:
    """Local expansion where the client sees the path (globs, folders, package indexes); a path
    the client does not see is kept as it is for the workers to open."""
    out = []
    for p in _flatten(paths):
        p = os.fspath(p)
        if os.path.exists(p) or any(ch in p for ch in "*?["):
            out += expand_paths([p])
        else:
            out.append(p)
    if not out:
        raise RocpdError("no database given")
    return list(dict.fromkeys(out))


class DaskConnection(FramesAPI):
    """Several rocpd databases read by Dask workers. Use ``rocpd.connect(..., dask=...)``.

    Offers what summaries need (``map``, ``parts``, the stats and frame methods); SQL over all files
    at once (``execute``, ``conn``) needs the files attached in one process: :class:`Connection`."""

    def __init__(self, *paths, dask=True, workers: int | None = None, strict: bool = False,
                 progress: bool = False, quiet: bool = False):
        del progress  # bars follow rocpd.progress (on in the CLI, drawn on a terminal)
        self.client, self._cluster, self._own_client = client_for(dask, workers, quiet)
        try:
            self._open(_expand(paths), strict)
        except BaseException:
            self.close()
            raise

    def _open(self, paths: list[str], strict: bool) -> None:
        found = self.run_tasks(worker.describe, paths, "open databases")
        self.paths, self.parts, self.skipped, errors = [], [], [], []
        for path, (status, value) in zip(paths, found, strict=True):
            if status == "ok":
                self.paths.append(path)
                self.parts += value
            else:
                if strict or len(paths) == 1:
                    raise RocpdError(value)
                errors.append(value)
                self.skipped.append((path, value))
        if not self.paths:
            more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
            raise RocpdError(f"none of the {len(paths)} databases is readable ({errors[0]}{more})")
        for e in errors:
            print(f"rocpd: warning: {e}; skipped", file=sys.stderr)

    # -- executing --------------------------------------------------------------------------
    def workers(self) -> int:
        """Threads over all workers: how many tasks run at once."""
        return max(1, sum(self.client.nthreads().values()))

    def run_tasks(self, func, items, label: str = "tasks", **kwargs) -> list:
        """``[func(item, **kwargs) for item in items]`` on the workers, in order, with a bar."""
        from distributed import as_completed

        futures = self.client.map(func, list(items), pure=False, **kwargs)
        bar = Bar(len(futures), f"{label} (dask)")
        try:
            for done, _ in enumerate(as_completed(futures), 1):
                bar.tick(done)
            return self.client.gather(futures)
        except BaseException:
            self.client.cancel(futures)
            raise

    def map(self, fn, *args, label: str | None = None, parallel: bool = False) -> list:
        """``fn(source, *args)`` for each database, one task per database; as Connection.map."""
        del parallel
        return self.run_tasks(_call, list(enumerate(self.paths)), label or fn.__name__, fn=fn,
                              args=args)

    def sources(self):
        raise RocpdError("this needs the databases open in this process; a Dask connection only"
                         " offers what goes through db.map (summaries, frames, ranks): use"
                         " rocpd.connect(...) without dask for it")

    @property
    def conn(self):
        return self.sources()

    def execute(self, sql: str, params=()):
        return self.sources()

    # -- facts from the parts (as on Connection) ---------------------------------------------
    metadata = Connection.metadata
    dropped_records = Connection.dropped_records
    dropped_total = Connection.dropped_total

    def close(self):
        client, cluster = getattr(self, "client", None), getattr(self, "_cluster", None)
        if client is None:
            return
        if cluster is None:  # someone else's workers: leave no file open on them
            try:
                client.run(worker.close_all)
            except Exception:  # noqa: BLE001  (a worker that went away holds nothing)
                pass
        if self._own_client:
            client.close()
        if cluster is not None:
            cluster.close()
        self.client = self._cluster = None

    def __repr__(self) -> str:
        files = len({p.path for p in self.parts})
        return f"<rocpd DaskConnection: {files} database(s), {len(self.parts)} part(s)>"


def _call(item, fn, args):
    index, path = item
    return worker.call(index, path, fn, args)


def connect(*paths, dask=True, workers: int | None = None, strict: bool = False,
            quiet: bool = False) -> DaskConnection:
    return DaskConnection(*paths, dask=dask, workers=workers, strict=strict, quiet=quiet)
