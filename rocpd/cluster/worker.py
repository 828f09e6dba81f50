"""What runs on a Dask worker: open a database where the worker sees it and apply one of the
per-file functions that summaries hand to ``db.map`` (the same functions the local path runs on
its own connections, so both paths compute the same partials).

Handles are kept per worker thread (sqlite3 connections are not shared between threads) in a
small LRU, so the several passes of one summary open each file once; a file replaced on disk
(another inode) is opened afresh. A handle only holds the file's schema: each query reads the
data anew, so a database still being written is not read stale.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from ..errors import RocpdError
from ..io.connection import FileHandle, Source

_LOCAL = threading.local()
_ALL: list[OrderedDict] = []  # every thread's cache, for close_all
_ALL_LOCK = threading.Lock()
_OPEN_PER_THREAD = int(os.environ.get("ROCPD_DASK_OPEN_FILES", "64"))


def _handles() -> OrderedDict:
    cache = getattr(_LOCAL, "handles", None)
    if cache is None:
        cache = _LOCAL.handles = OrderedDict()
        with _ALL_LOCK:
            _ALL.append(cache)
    return cache


def handle(path: str) -> FileHandle:
    try:
        st = os.stat(path)
    except OSError as e:
        host = os.uname().nodename
        raise RocpdError(f"no such file on Dask worker host {host} ({e.strerror}); workers read"
                         " the files where they are: give paths every worker can see", path) from None
    key = (path, st.st_dev, st.st_ino)
    cache = _handles()
    h = cache.get(key)
    if h is not None:
        cache.move_to_end(key)
        return h
    h = FileHandle(path)
    cache[key] = h
    while len(cache) > max(_OPEN_PER_THREAD, 1):
        cache.popitem(last=False)[1].close()
    return h


def call(index: int, path: str, fn, args: tuple):
    """``fn(Source, *args)`` for the database at ``path`` (the ``index``-th input)."""
    h = handle(path)
    return fn(Source(index, path, h.conn, tuple(h.parts)), *args)


def describe(path: str):
    """("ok", parts) for a readable rocpd database, ("error", one-line reason) otherwise."""
    try:
        return "ok", handle(path).parts
    except RocpdError as e:
        return "error", str(e)


def close_all() -> int:
    """Close every thread's cached handles (``client.run`` after a run, when no task of it is
    running: no file stays open on a long-lived worker)."""
    n = 0
    with _ALL_LOCK:
        for cache in _ALL:
            while cache:
                cache.popitem()[1].close()
                n += 1
    return n
