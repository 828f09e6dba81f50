"""Parent records ranges before and after fork(); the child records its own and leaves with
os._exit like a multiprocessing worker. Prints the child's pid."""
import os
import sys

import roctx

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5
for _ in range(N):
    with roctx.range("parent-before"):
        pass
pid = os.fork()
if pid == 0:
    for _ in range(N):
        with roctx.range("child"):
            pass
    os._exit(0)
for _ in range(N):
    with roctx.range("parent-after"):
        pass
_, status = os.waitpid(pid, 0)
print("child", pid, os.waitstatus_to_exitcode(status), flush=True)
