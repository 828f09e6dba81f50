"""Records numbered ranges forever (until killed); prints BOOTTIME every second."""
import time

import roctx

i = 0
last = 0
while True:
    with roctx.range(f"r{i}"):
        time.sleep(0.001)
    i += 1
    now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    if now - last > 200_000_000:
        print("tick", now, i, flush=True)
        last = now
