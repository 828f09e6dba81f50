"""Host-metrics workload: touches MIB fresh pages (counted page faults, RSS growth) inside a
ROCTx range "touch", spins one thread inside "spin" (the CPU time it got, measured here),
sleeps inside "sleep". Prints the figures the test compares against as one JSON line."""

import json
import mmap
import os
import sys
import time

import roctx

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 64
SPIN = float(sys.argv[2]) if len(sys.argv) > 2 else 0.8
SLEEP = float(sys.argv[3]) if len(sys.argv) > 3 else 0.8
PAGE = mmap.PAGESIZE

time.sleep(0.3)  # a few readings before anything happens
with roctx.range("touch"):
    buf = mmap.mmap(-1, MIB << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        buf.madvise(mmap.MADV_NOHUGEPAGE)  # one fault per 4 KiB page, whatever THP's mode
    before = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[7]
    for off in range(0, MIB << 20, PAGE):
        buf[off] = 1
    after = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[7]
    time.sleep(0.3)
with roctx.range("spin"):
    cpu0 = time.process_time()
    end = time.perf_counter() + SPIN
    n = 0
    while time.perf_counter() < end:
        n += 1
    spin_cpu = time.process_time() - cpu0
with roctx.range("sleep"):
    time.sleep(SLEEP)
print(json.dumps({"pages": (MIB << 20) // PAGE, "minflt_delta": int(after) - int(before),
                  "spin_cpu_s": spin_cpu, "pid": os.getpid()}))
