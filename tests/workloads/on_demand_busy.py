"""A CPU-busy "server" for sampled windows: arithmetic in ROCTx ranges req<i> until the file
argv[1] exists (or 60 s pass)."""
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
        sum(j * j for j in range(20000))
    i += 1
