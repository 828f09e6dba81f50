"""Sampling workload: a thread started before the session could see it (when profiled in
process), threads started during it, and a GIL-releasing wait attributed to its caller."""
import sys
import threading
import time


def worker_alpha(seconds):
    t0 = time.thread_time()
    x = 0
    while time.thread_time() - t0 < seconds:
        x += sum(range(500))


def worker_beta(seconds):
    t0 = time.thread_time()
    x = 0
    while time.thread_time() - t0 < seconds:
        x += sum(range(500))


def sleeper(seconds):
    time.sleep(seconds)  # GIL released: wall mode must attribute this line


def main(seconds=None):
    seconds = seconds if seconds is not None else (float(sys.argv[1]) if len(sys.argv) > 1 else 0.5)
    ts = [threading.Thread(target=worker_alpha, args=(seconds,), name="alpha"),
          threading.Thread(target=worker_beta, args=(seconds,), name="beta")]
    for t in ts:
        t.start()
    sleeper(seconds)
    for t in ts:
        t.join()


if __name__ == "__main__":
    main()
