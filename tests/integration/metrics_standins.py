"""The test-only stand-in GPU management libraries (tests/standins/) built for the device-metrics
tests, and the values they answer, as functions of the device d and the reading number k (the
same formulas as their C sources)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from support import ROOT

STANDINS = ROOT / "tests" / "standins"
NVML_DECLS = ROOT / "cpp" / "capture" / "metrics" / "nvml"


def real_nvml_header() -> str | None:
    """The folder of a real nvml.h: the nvidia-nvml-dev wheel's, else a CUDA toolkit's."""
    roots = [sysconfig.get_paths()["purelib"], *sys.path]
    for root in roots:
        for found in sorted(glob.glob(os.path.join(root, "nvidia", "*", "include", "nvml.h"))):
            return os.path.dirname(found)
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "include", "nvml.h")):
            return os.path.join(home, "include")
    return None


def build(out_dir) -> dict:
    """{'nvml': path, 'rocm_smi': path or None, 'nvml_header': 'real nvml.h' | 'nvml_api.h'}."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return {}
    out = {}
    nvml = os.path.join(out_dir, "libstandin_nvml.so")
    header = real_nvml_header()
    flags = ["-DSTANDIN_REAL_NVML_H", f"-I{header}"] if header else [f"-I{NVML_DECLS}"]
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", nvml,
                    STANDINS / "standin_nvml.c", *flags], check=True)
    out["nvml"] = nvml
    out["nvml_header"] = "real nvml.h" if header else "nvml_api.h"
    out["rocm_smi"] = None
    if os.path.exists("/usr/include/rocm_smi/rocm_smi.h") or os.path.exists(
            "/opt/rocm/include/rocm_smi/rocm_smi.h"):
        rsmi = os.path.join(out_dir, "libstandin_rocm_smi.so")
        subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", rsmi,
                        STANDINS / "standin_rocm_smi.c", "-I/opt/rocm/include"], check=True)
        out["rocm_smi"] = rsmi
    return out


# ---- what the stand-ins answer (tests/standins/*.c) -----------------------------------------
MB = 1e6


def nvml_value(metric: str, d: int, k: int) -> float:
    return {
        "device_busy_gfx": (k * 7 + d * 50) % 101,
        "device_busy_umc": (k * 3 + d * 10) % 101,
        "device_memory_usage": 1000 + 10 * k + d,
        "device_power": (100000 + 1000 * k + 500 * d) / 1000,
        "device_temp": 40 + k % 30 + d,
        "device_gfx_clock": 1000 + k,
        "device_mem_clock": 2000 + d,
        "device_throttle_reasons": 4 if k % 2 else 1,
        "device_pcie_tx": (1000 * k + d) * 1024 / MB,
        "device_pcie_rx": 2000 * k * 1024 / MB,
    }[metric]


# NVLink: +1 MiB sent and +2 MiB received per reading; a rate from the second reading on.
NVML_LINK_BYTES = {"device_link_tx": 1 << 20, "device_link_rx": 2 << 20}
NVML_UNITS = {"device_busy_gfx": "%", "device_busy_umc": "%", "device_memory_usage": "MB",
              "device_power": "W", "device_temp": "\u00b0C", "device_gfx_clock": "MHz",
              "device_mem_clock": "MHz", "device_throttle_reasons": "bitmask",
              "device_pcie_tx": "MB/s", "device_pcie_rx": "MB/s", "device_link_tx": "MB/s",
              "device_link_rx": "MB/s"}


def rsmi_value(metric: str, d: int, k: int) -> float:
    return {
        "device_busy_gfx": (k * 11 + d * 20) % 101,
        "device_busy_umc": (k * 5) % 101,
        "device_memory_usage": 2000 + 10 * k + d,
        "device_power": 200 + k + 0.25 * d,
        # Device 1 has no edge sensor: the junction one, 50.5 + k.
        "device_temp": 45 + k if d != 1 else 50.5 + k,
        "device_gfx_clock": (500, 1000, 1500)[k % 3],
        "device_mem_clock": 1200,
        "device_throttle_reasons": k % 4,
    }[metric]
