"""Exit the way argv[1] says: code N, exception, os._exit, message."""
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
