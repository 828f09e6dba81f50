"""Progress bars for long work (convert, summaries over many databases): plain text on stderr,
drawn only when the command line switched them on (:func:`enable`) and stderr is a terminal, so
library calls, pipes, logs and notebooks never see them."""

from __future__ import annotations

import sqlite3
import sys
import time

_enabled = False


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on


def active() -> bool:
    return _enabled and sys.stderr.isatty()


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


class Bar:
    """``tick(n)`` moves to n of total; the last tick (or :meth:`close`, where filters leave
    the total unreached) ends the line. Past a second, the time taken and the time left at the
    rate so far are shown. Redraws at most 10 times a second."""

    def __init__(self, total: int, label: str, width: int = 30):
        self.total, self.label, self.width = max(int(total), 1), label, width
        self.on = active()
        self._t0 = time.monotonic()
        self._last = 0.0
        self._done = self._shown = 0
        self._open = False  # a line drawn and not yet ended

    def tick(self, done: int) -> None:
        if not self.on or (self._shown >= self.total and not self._open):
            return  # off, or the last line drawn (a total counted short draws it once)
        self._done = done
        now = time.monotonic()
        final = done >= self.total
        if not final and now - self._last < 0.1:
            return
        self._last = now
        self._draw(done, now, final)

    def _draw(self, done: int, now: float, final: bool) -> None:
        n = self.width * min(done, self.total) // self.total
        took = now - self._t0
        times = ""
        if took >= 1.0:
            times = f" {_clock(took)}" + (
                f", ~{_clock(took * (self.total - done) / done)} left" if 0 < done < self.total
                else "")
        sys.stderr.write(f"\r{self.label} [{'#' * n}{'.' * (self.width - n)}] {done}/{self.total}"
                         f"{times}\033[K" + ("\n" if final else ""))
        sys.stderr.flush()
        self._shown, self._open = done, not final

    def close(self) -> None:
        """End the line where the total was not reached (filters), showing where it stopped."""
        if self.on and self._done != self._shown:
            self._draw(self._done, time.monotonic(), False)
        if self._open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self._open = False


def iterate(items, label: str, total: int | None = None):
    """Yield the items (lazily, so a map() is consumed as it goes), ticking a bar as each is done."""
    if total is None:
        items = list(items)
        total = len(items)
    bar = Bar(total, label)
    for i, item in enumerate(items):
        yield item
        bar.tick(i + 1)


class Rows:
    """A bar over the rows of one file's largest tables, for an export that reads them as it
    writes: counted only where the bar is drawn (a count(*) per table, ~0.05 s a million rows),
    and ended by :meth:`close` where filters leave rows unread."""

    TABLES = ("rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_region", "rocpd_sample")

    def __init__(self, conn, label: str, tables: tuple = TABLES):
        self.done, self.bar = 0, None
        if active():
            total = 0
            for t in tables:
                try:
                    total += conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                except sqlite3.Error:  # a table another writer does not have: not counted
                    continue
            self.bar = Bar(total, label)

    def add(self, n: int) -> None:
        if self.bar is not None:
            self.done += n
            self.bar.tick(self.done)

    def counted(self, items):
        """``items``, the bar moved every 65,536 of them and at their end (where it is drawn)."""
        return items if self.bar is None else self._counted(items)

    def _counted(self, items):
        n = 0
        for item in items:
            yield item
            n += 1
            if n == 1 << 16:
                self.add(n)
                n = 0
        self.add(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
