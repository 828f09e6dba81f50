"""fork() corner cases: a child that records nothing, a child whose output folder is new
(-d .../%pid%), and ROCTx marks in a child. Prints the children's pids."""
import os
import threading

import roctx

with roctx.range("parent"):
    pass
idle = os.fork()
if idle == 0:
    os._exit(0)  # records nothing: leaves no database
busy = os.fork()
if busy == 0:
    roctx.mark("child-mark")
    roctx.name_thread("child-main")
    print("child tid", threading.get_native_id(), flush=True)
    os._exit(0)
for pid in (idle, busy):
    os.waitpid(pid, 0)
print("idle", idle, "busy", busy, flush=True)
