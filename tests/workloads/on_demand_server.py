"""A "server" loop for on-demand capture: numbered ROCTx ranges every ~5 ms until the file
argv[1] exists (or 60 s pass); prints "serving" once it runs."""
import os
import sys
import time

import roctx

stop_file = sys.argv[1]
deadline = time.monotonic() + 60
print("serving", flush=True)
i = 0
while time.monotonic() < deadline and not os.path.exists(stop_file):
    with roctx.range(f"req{i}"):
        time.sleep(0.005)
    i += 1
print("served", i, flush=True)
