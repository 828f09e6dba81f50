"""Records N ranges named TAG, then waits until every process named on the command line has
started (a file per tag in GATE_DIR), so that runs sharing an output name surely overlap."""
import os
import sys
import time

import roctx

tag, n, gate, others = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
for _ in range(n):
    roctx.push(tag)
    roctx.pop()
open(os.path.join(gate, tag), "w").close()
deadline = time.monotonic() + 60
while not all(os.path.exists(os.path.join(gate, o)) for o in others):
    if time.monotonic() > deadline:
        sys.exit(f"{tag}: the other runs never started")
    time.sleep(0.02)
print(tag, "done", flush=True)
