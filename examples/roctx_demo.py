"""Every ROCTx call from Python, in one short program.

    python -m rocprof run -S examples/roctx_demo.py
"""

import threading
import time

import roctx


@roctx.range("decorated_work")
def decorated_work():
    time.sleep(0.002)


def worker(n: int) -> None:
    roctx.name_thread(f"worker-{n}")
    with roctx.range("worker_loop"):
        for _ in range(3):
            decorated_work()


def main() -> None:
    roctx.mark("demo start")
    with roctx.range("setup"):
        time.sleep(0.001)
    roctx.push("manual push/pop")  # ROCm: roctxRangePushA / roctxRangePop
    time.sleep(0.001)
    roctx.pop()
    rid = roctx.start("cross-thread range")  # ends on another thread
    t = threading.Thread(target=lambda: (time.sleep(0.003), roctx.stop(rid)))
    t.start()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads + [t]:
        th.join()
    roctx.pause()  # like roctxProfilerPause: nothing between here and resume is kept
    with roctx.range("not recorded"):
        pass
    roctx.resume()
    roctx.rangePush("camelCase alias")
    roctx.rangePop()
    roctx.mark("demo end")


if __name__ == "__main__":
    main()
