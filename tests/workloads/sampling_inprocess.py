"""In-process sampling: a thread started before rocprof.profile() and one started inside it,
then short threads started one after another (each must be sampled from its start); a ROCTx
range around part of the work. argv: output directory [sampling method]."""
import sys
import threading
import time

import rocprof
import roctx


def early_worker(stop):
    while not stop.is_set():
        sum(i * i for i in range(200))


def late_worker(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


def short_worker(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


def in_range_work(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


def outside_work(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


SHORT_THREADS, SHORT_SECONDS = 4, 0.1
stop = threading.Event()
early = threading.Thread(target=early_worker, args=(stop,), name="early")
early.start()
method = sys.argv[2] if len(sys.argv) > 2 else "signal"
with rocprof.profile(output_dir=sys.argv[1], sample=1000, sampling_method=method):
    late = threading.Thread(target=late_worker, args=(0.3,), name="late")
    late.start()
    with roctx.range("hot-range"):
        in_range_work(0.3)
    outside_work(0.3)
    late.join()
    for i in range(SHORT_THREADS):  # CPU time in short_worker: SHORT_THREADS * SHORT_SECONDS
        t = threading.Thread(target=short_worker, args=(SHORT_SECONDS,), name=f"short{i}")
        t.start()
        t.join()
    stop.set()
    early.join()
