"""argv[1] threads record ROCTx ranges as fast as they can until the process is stopped by a
signal. Each thread publishes how many ranges it has finished into argv[2], a shared file of
one 8-byte counter per thread, after every range: a reader that looks before sending the
signal knows a count of ranges each thread had recorded by then."""
import mmap
import os
import struct
import sys
import threading
import time

import roctx

threads, path = int(sys.argv[1]), sys.argv[2]
with open(path, "wb") as f:
    f.write(b"\0" * 8 * threads)
fd = os.open(path, os.O_RDWR)
counts = mmap.mmap(fd, 8 * threads)


def work(k):
    r = roctx.range(f"burst{k}")
    pack = struct.pack_into
    n = 0
    while True:
        with r:
            pass
        n += 1
        pack("<q", counts, 8 * k, n)


for k in range(threads):
    threading.Thread(target=work, args=(k,), daemon=True).start()
print("ready", flush=True)
while True:
    time.sleep(1)
