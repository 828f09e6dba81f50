"""What one NVML reading costs the reading thread, wall and CPU (user + system), on the GPU
machine: the energy counter, power, utilisation and memory in use, each called N times in a row
on GPU 0 with the GPU idle and then busy with bf16 GEMMs. The energy reader (`rocprof run
--energy`) pays this per reading, on a thread of its own.

  python3 benchmarks/nvml_read_cost.py [--calls 200]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import threading
import time


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class Util(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


def calls(nvml, dev):
    e, p = ctypes.c_ulonglong(), ctypes.c_uint()
    u, m = Util(), Memory()
    return {
        "nvmlDeviceGetTotalEnergyConsumption": lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(dev, ctypes.byref(e)),
        "nvmlDeviceGetPowerUsage": lambda: nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(p)),
        "nvmlDeviceGetUtilizationRates": lambda: nvml.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(u)),
        "nvmlDeviceGetMemoryInfo": lambda: nvml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(m)),
    }


def timed(fn, n):
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(n):
        rc = fn()
        if rc != 0:
            return None
    return (time.perf_counter() - w0) / n * 1e6, (time.thread_time() - c0) / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        print(f"nvml_read_cost: no NVML here ({e})")
        return 2
    nvml.nvmlInit_v2()
    dev = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
    fns = calls(nvml, dev)
    stop = threading.Event()

    def busy():
        import torch

        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        while not stop.is_set():
            for _ in range(16):
                a @ a
            torch.cuda.synchronize()

    print("| call | GPU | wall us/call | CPU us/call |")
    print("|---|---|---|---|")
    for state in ("idle", "busy"):
        t = None
        if state == "busy":
            t = threading.Thread(target=busy, daemon=True)
            t.start()
            time.sleep(3)
        for name, fn in fns.items():
            r = timed(fn, args.calls)
            print(f"| {name} | {state} | " + ("unsupported | - |" if r is None else f"{r[0]:,.1f} | {r[1]:,.1f} |"))
        if t is not None:
            stop.set()
            t.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
