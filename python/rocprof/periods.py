"""rocprofv3's ``--collection-period DELAY:DURATION:REPEAT``: the thread that resumes and pauses
the session in the profiled process (the launcher's own process or a child). Below the CLI,
which only parses the periods."""

from __future__ import annotations

from . import _core

PERIOD_UNITS = {"hour": 3600.0, "min": 60.0, "sec": 1.0, "msec": 1e-3, "usec": 1e-6, "nsec": 1e-9}


def start_collection_periods(periods: list[tuple[float, float, int]], unit: str) -> None:
    """A daemon thread that resumes the (paused-at-start) session for each period's DURATION
    after its DELAY, REPEAT times; several periods run one after another."""
    import threading
    import time

    scale = PERIOD_UNITS[unit]

    def run() -> None:
        for delay, duration, repeat in periods:
            n = 0
            while repeat == 0 or n < repeat:
                time.sleep(delay * scale)
                _core.resume()
                time.sleep(duration * scale)
                _core.pause()
                n += 1

    threading.Thread(target=run, name="rocprof-collection-period", daemon=True).start()
