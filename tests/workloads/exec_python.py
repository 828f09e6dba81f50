"""Records N ranges, then os.execv()s Python on this file with "again", which records one."""
import os
import sys

import roctx

if sys.argv[1:] == ["again"]:
    with roctx.range("after-exec"):
        pass
    sys.exit(0)
for _ in range(int(sys.argv[1])):
    with roctx.range("before-exec"):
        pass
os.execv(sys.executable, [sys.executable, __file__, "again"])
