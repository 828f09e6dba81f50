"""Sampling across os.fork, as a DataLoader worker does it: the parent samples (with a
background thread running, as training loops have), forks; the child does CPU work and
leaves with os._exit; the parent works on meanwhile, then waits. Then STORM short-lived
children in a row, each of which must exit with status 7 (not crash or hang).
Prints "child <pid>" and "storm bad <n>". argv: CPU seconds per phase, STORM."""
import os
import sys
import threading
import time


def spin(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


def background():
    while True:
        spin(0.005)
        time.sleep(0.001)


def parent_before(seconds):
    spin(seconds)


def child_work(seconds):
    spin(seconds)


def parent_after(seconds):
    spin(seconds)


def storm_child():
    spin(0.02)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    storm = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    threading.Thread(target=background, name="background", daemon=True).start()
    parent_before(seconds)
    pid = os.fork()
    if pid == 0:
        child_work(seconds)
        os._exit(0)
    print(f"child {pid}", flush=True)
    parent_after(seconds)
    _, status = os.waitpid(pid, 0)
    bad = 0
    for _ in range(storm):
        p = os.fork()
        if p == 0:
            storm_child()
            os._exit(7)
        _, st = os.waitpid(p, 0)
        bad += os.waitstatus_to_exitcode(st) != 7
    print(f"storm bad {bad}", flush=True)
    sys.exit(os.waitstatus_to_exitcode(status) or (3 if bad else 0))


if __name__ == "__main__":
    main()
