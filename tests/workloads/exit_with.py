"""Exit the way argv[1] says: code N, exception, os._exit, message, closed N (fds 1 and 2
closed, then code N), interrupt (prints "ready", then waits for Ctrl-C)."""
import os
import sys

import roctx

with roctx.range("before-exit"):
    pass
how = sys.argv[1]
if how == "code":
    sys.exit(int(sys.argv[2]))
if how == "raise":
    def inner():
        raise ValueError("boom from the workload")
    inner()
if how == "os_exit":
    roctx.mark("about to os._exit")
    os._exit(int(sys.argv[2]))
if how == "message":
    sys.exit("fatal: a message")
if how == "closed":
    print("closing", flush=True)
    os.close(1)
    os.close(2)
    sys.exit(int(sys.argv[2]))
if how == "interrupt":
    import time

    print("ready", flush=True)
    # Short sleeps: a signal that lands between the eval loop's last check and the start of a
    # sleep is only seen when the sleep ends (so in plain Python: 2 in 200 runs on a loaded box).
    for _ in range(600):
        time.sleep(0.1)
