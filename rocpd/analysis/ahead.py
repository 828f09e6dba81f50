"""A generator run one item ahead on a thread of its own: where making an item is mostly
SQLite's work (a chunk of rows aggregated into texts, which SQLite does without holding the
GIL), the next chunk is read while the caller works on this one. The reader should query on a
connection of its own: two threads on one connection can deadlock in Python's sqlite3 module
(one holding SQLite's mutex and waiting for the GIL in a callback, the other the reverse)."""

from __future__ import annotations

import queue
import threading

_END = object()


def ahead(items, depth: int = 1):
    """Yield what ``items`` (an iterator) yields, in order, at most ``depth`` made in advance;
    its exception is raised here, where it would have been; closing this stops the reader
    (after the item it is making) before returning."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((_END, None))
        except BaseException as e:  # handed to the caller, raised there
            put((None, e))

    reader = threading.Thread(target=read, name="rocpd-read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            item, error = q.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
    finally:
        stop.set()
        reader.join()
        close = getattr(items, "close", None)
        if close is not None:  # a generator stopped early runs its own cleanup, here
            close()
