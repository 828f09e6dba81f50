"""Records ranges, leaves one push open, then waits for a signal from outside (the test
sends it after reading "ready"). argv[1]: "plain" or "handler" (a Python handler that exits
with code 7, installed before the ranges)."""
import signal
import sys
import time

import roctx

if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))
for _ in range(1000):
    with roctx.range("r"):
        pass
roctx.push("open-at-signal")
print("ready", flush=True)
for _ in range(600):  # short sleeps: a Python handler runs only between them (exit_with.py)
    time.sleep(0.1)
