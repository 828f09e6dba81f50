"""argv[1] threads each record argv[2] ROCTx ranges in a tight loop (a burst far faster than
the database can take it). Prints the session's buffer peak when run under rocprof."""
import sys
import threading

import roctx

threads, per = int(sys.argv[1]), int(sys.argv[2])


def work(k):
    r = roctx.range(f"burst{k}")
    for _ in range(per):
        with r:
            pass


ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("done", flush=True)
