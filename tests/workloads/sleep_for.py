"""Sleeps argv[1] seconds inside a ROCTx range "sleep" (device-metrics runs on stand-ins)."""

import sys
import time

import roctx

with roctx.range("sleep"):
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
