"""A fork child that leaves with sys.exit (so through the launcher's exit path)."""
import os
import sys

import roctx

pid = os.fork()
if pid == 0:
    with roctx.range("child"):
        pass
    sys.exit(3)
_, status = os.waitpid(pid, 0)
print("child", pid, os.waitstatus_to_exitcode(status), flush=True)
