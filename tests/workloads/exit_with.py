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
    time.sleep(60)
