"""Progress bars for long work (convert, summaries over many databases): plain text on stderr,
drawn only when the command line switched them on (:func:`enable`) and stderr is a terminal, so
library calls, pipes, logs and notebooks never see them."""

from __future__ import annotations

import sys
import time

_enabled = False


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on


def active() -> bool:
    return _enabled and sys.stderr.isatty()


class Bar:
    """``tick(n)`` moves to n of total; the last tick ends the line. Redraws at most 10 times a
    second."""

    def __init__(self, total: int, label: str, width: int = 30):
        self.total, self.label, self.width = max(int(total), 1), label, width
        self.on = active()
        self._last = 0.0

    def tick(self, done: int) -> None:
        if not self.on:
            return
        now = time.monotonic()
        final = done >= self.total
        if not final and now - self._last < 0.1:
            return
        self._last = now
        n = self.width * min(done, self.total) // self.total
        sys.stderr.write(f"\r{self.label} [{'#' * n}{'.' * (self.width - n)}] {done}/{self.total}"
                         + ("\n" if final else ""))
        sys.stderr.flush()


def iterate(items, label: str, total: int | None = None):
    """Yield the items (lazily, so a map() is consumed as it goes), ticking a bar as each is done."""
    if total is None:
        items = list(items)
        total = len(items)
    bar = Bar(total, label)
    for i, item in enumerate(items):
        yield item
        bar.tick(i + 1)
