"""rocpd: read and analyse rocpd (schema v3) profiling databases.

``import rocpd`` needs only the standard library; pandas and the optional packages are imported
when a function that needs them is called.
"""

from __future__ import annotations

import os

from .errors import RocpdError

# Tells this package from ROCm's rocpd of the same name (`rocprof info` reads it without importing).
_ROCPROF_PACKAGE = True

__all__ = ["connect", "execute", "read_agents", "read_nodes", "read_processes", "read_threads",
           "write_csv", "write_perfetto", "write_otf2", "format_path", "version_info",
           "RocpdImportData", "RocpdError", "Connection"]


def connect(*paths, progress: bool = False, strict: bool = False, dask=None, workers=None):
    """Open rocpd databases read-only as one :class:`Connection`: files, globs, directories, package
    index files / .rpdb folders (:mod:`rocpd.io.package`), as arguments or in a list (ROCm's
    ``rocpd.connect(["a.db", "b.db"])``).

    A file that cannot be read (corrupt, not rocpd) among several is left out with a one-line
    warning on stderr and listed in ``Connection.skipped``; ``strict=True`` raises instead.

    ``dask``: True (a LocalCluster of ``workers`` processes, or $DASK_SCHEDULER_ADDRESS), a
    scheduler address or a ``distributed.Client``: summaries then run on Dask workers, one task
    per database (:mod:`rocpd.cluster`), with the same results.
    """
    if dask is not None and dask is not False:
        from .cluster import connect as dask_connect

        return dask_connect(*paths, dask=dask, workers=workers, strict=strict)
    from .io.connection import Connection

    return Connection(*paths, progress=progress, strict=strict)


def __getattr__(name):
    if name in ("Connection", "RocpdImportData"):  # ROCm's class name for the same thing
        from .io.connection import Connection

        return Connection
    if name == "version_info":
        return _version_info()
    if name == "diff":  # rocpd.diff(a, b): the package rocpd.diff, callable (see its text)
        import importlib

        return importlib.import_module(".diff", __name__)
    if name in ("energy", "memory"):  # rocpd.energy(db, by=...), rocpd.memory(db): callable
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)


def _version_info() -> dict:
    import platform

    from rocshared.version import __version__ as v

    nums = [int(x) if x.isdigit() else 0 for x in (v.split(".") + ["0", "0"])[:3]]
    return {"version": v, "major": nums[0], "minor": nums[1], "patch": nums[2],
            "system_name": platform.system(), "system_processor": platform.machine(),
            "implementation": "rocprof (pure Python rocpd)"}


def _conn(db_or_path):
    return db_or_path if hasattr(db_or_path, "parts") else connect(db_or_path)


# ROCm's module-level names, kept for scripts written against ROCm's rocpd package.
def execute(db, sql: str, params=()):
    """Run read-only SQL over ``db`` (a Connection or a path); returns a sqlite3 cursor."""
    return _conn(db).execute(sql, params)


def read_agents(db, condition: str = ""):
    """ROCm's read_agents: a list of agents (``.node_id``, ``.logical_node_id``, ``.gpu_index``,
    ``.name``, ...; see :mod:`rocpd.io.info`), optionally ``condition`` ("WHERE type = 'GPU'");
    ``Connection.agents()`` gives the same rows as a DataFrame."""
    from .io.info import read_agents as read

    return read(_conn(db), condition)


def read_nodes(db, condition: str = ""):
    from .io.info import read_nodes as read

    return read(_conn(db), condition)


def read_processes(db, condition: str = ""):
    """ROCm's read_processes: a list of processes (``.pid``, ``.command``, ...);
    ``Connection.processes()`` gives a DataFrame."""
    from .io.info import read_processes as read

    return read(_conn(db), condition)


def read_threads(db, condition: str = ""):
    """ROCm's read_threads: a list of threads (``.tid``, ``.name``, ...);
    ``Connection.threads()`` gives a DataFrame."""
    from .io.info import read_threads as read

    return read(_conn(db), condition)


def format_path(path: str, tag: str | None = None) -> str:
    from .output_config import format_path as fmt

    return fmt(path, tag)


def _write(fmt: str, stem: str, ext: str, db, config=None, **kwargs) -> bool:
    """ROCm's write_*: files named by an output_config (OUTPUT_PATH/OUTPUT_FILE_...)."""
    import importlib

    from .output_config import output_config

    filters = {k: kwargs.pop(k) for k in list(kwargs)
               if k in ("start", "end", "start_marker", "end_marker", "inclusive")}
    cfg = output_config(**kwargs) if config is None else config.update(**kwargs)
    mod = importlib.import_module(f".export.{fmt}", __name__)
    conn = _conn(db)
    if fmt == "csv":  # a prefix: the exporter appends _<kind>_trace.csv
        prefix = os.path.join(cfg.folder(), format_path(cfg.output_file or "results"))
        mod.write(conn, prefix, guid=True, **filters)  # ROCm's rocpd.write_csv columns
    elif fmt == "otf2":
        mod.write(conn, cfg.folder(), archive_name=cfg.name(stem), shared=True, **filters)
    else:
        mod.write(conn, cfg.filename(stem, ext), **filters)
    return True


def write_csv(db, config=None, **kwargs) -> bool:
    """rocprofv3's CSV files as OUTPUT_PATH/OUTPUT_FILE_<kind>_trace.csv (and _stats.csv)."""
    return _write("csv", "", "", db, config, **kwargs)


def write_perfetto(db, config=None, **kwargs) -> bool:
    """A Perfetto trace, OUTPUT_PATH/OUTPUT_FILE_results.pftrace."""
    return _write("perfetto", "results", ".pftrace", db, config, **kwargs)


def write_otf2(db, config=None, **kwargs) -> bool:
    """An OTF2 archive, OUTPUT_PATH/OUTPUT_FILE_results.otf2."""
    return _write("otf2", "results", "", db, config, **kwargs)
