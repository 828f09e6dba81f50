"""fork() many times while another thread records as fast as it can, so forks land while
the drain thread is busy; every child must finish (no deadlock on an inherited lock)."""
import os
import sys
import threading

import roctx

stop = False


def spin():
    while not stop:
        with roctx.range("busy"):
            pass


t = threading.Thread(target=spin)
t.start()
children = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        with roctx.range("child-work"):
            pass
        os._exit(0)
    children.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in children]
stop = True
t.join()
print("children", len(children), "ok", codes.count(0), flush=True)
