"""One short range every 10 ms for 0.8 s: what -P (collection period) keeps is a window."""
import time

import roctx

end = time.monotonic() + 0.8
i = 0
while time.monotonic() < end:
    with roctx.range(f"tick-{i:03d}"):
        pass
    i += 1
    time.sleep(0.01)
print("ticks", i)
