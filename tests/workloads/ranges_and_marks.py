"""ROCTx ranges and marks on two threads, with some Python work to sample: a step loop with a
mark per step, nested ranges, a worker thread with its own range and mark."""
import threading

import roctx


def work(n: int) -> int:
    return sum(i * i for i in range(n))


def worker():
    roctx.name_thread("loader")
    with roctx.range("load"):
        work(20_000)
        roctx.mark("batch ready")


t = threading.Thread(target=worker)
t.start()
with roctx.range("train"):
    for step in range(4):
        roctx.mark(f"step {step} begins")
        with roctx.range("step"):
            with roctx.range("forward"):
                work(10_000)
            with roctx.range("backward"):
                work(20_000)
t.join()
roctx.mark("done")
