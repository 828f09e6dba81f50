"""argv[1] ranges named "r<i % 100>" from the main thread, then exits with argv[2] (default 0)."""
import sys

import roctx

n = int(sys.argv[1])
names = [f"r{i}" for i in range(100)]
for i in range(n):
    with roctx.range(names[i % 100]):
        pass
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
