"""Empirical peaks of each GPU, as rocprof-compute measures its empirical roofline: a DRAM copy, an
L2-resident copy and a few GEMMs (PyTorch, cuBLAS) timed once per device, cached in
``~/.cache/rocprof/peaks.json`` (``rocpd.sol.cache_path()``) keyed by the device's UUID.

``rocprof run --sol`` takes the cached numbers into the run's options (so ``rocpd sol`` finds them
in the database); a device without an entry is measured first, in a child process, so that the
profiled program's process never initialises CUDA for it. ``rocprof peaks`` measures on demand.
``python -m rocprof.peaks`` is that child: it prints the updated cache as JSON.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

# (precision key in rocpd.kernel_metrics, torch dtype name, matrix size, allow TF32)
GEMMS = (("tensor_bf16", "bfloat16", 8192, False), ("tensor_fp16", "float16", 8192, False),
         ("tensor_tf32", "float32", 8192, True), ("fp32", "float32", 4096, False),
         ("tensor_fp64", "float64", 4096, False))


def cache_path() -> str:
    from rocpd.sol import cache_path as path

    return path()


def load() -> dict:
    try:
        with open(cache_path()) as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _best_seconds(fn, sync, repeats: int = 5, inner: int = 10) -> float:
    """Shortest time of one call over `repeats` timings of `inner` back-to-back calls."""
    import time

    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def measure(index: int) -> dict:
    """One device's peaks (torch with CUDA needed). Bandwidths count bytes read plus written."""
    import torch

    dev = torch.device("cuda", index)
    props = torch.cuda.get_device_properties(dev)
    sync = lambda: torch.cuda.synchronize(dev)  # noqa: E731
    free, _ = torch.cuda.mem_get_info(dev)
    entry = {"device": props.name, "uuid": _uuid_of(props), "measured":
             datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "torch": torch.__version__, "flops": {}, "method": {}}
    entry["dram_bytes_per_second"], entry["method"]["dram"] = _dram(torch, dev, free, sync)
    l2 = getattr(props, "L2_cache_size", 0) or (40 << 20)
    entry["l2_bytes_per_second"], entry["method"]["l2"] = _l2(torch, dev, l2, sync)
    for key, dtype, size, tf32 in GEMMS:
        old = torch.backends.cuda.matmul.allow_tf32
        try:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            t = getattr(torch, dtype)
            p = torch.randn(size, size, device=dev).to(t)
            q = torch.randn(size, size, device=dev).to(t)
            secs = _best_seconds(lambda p=p, q=q: p @ q, sync, repeats=3, inner=5)
            entry["flops"][key] = 2.0 * size ** 3 / secs
            entry["method"][key] = f"torch.matmul {dtype} {size}^3" + (" (TF32)" if tf32 else "")
            del p, q
        except (RuntimeError, TypeError) as e:  # a dtype this GPU or build cannot multiply
            entry["method"][key] = f"not measured: {' '.join(str(e).split())[:120]}"
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old
    torch.cuda.empty_cache()
    return entry


def _dram(torch, dev, free: int, sync) -> tuple[float, str]:
    """A copy far larger than L2, read + written: the best of a memcpy and a copy kernel."""
    n = max(1 << 20, min(1 << 28, int(free * 0.2) // 8))  # float32 elements per buffer
    x = torch.ones(n, device=dev)
    y = torch.empty_like(x)
    best, how = 0.0, ""
    for label, fn in (("copy_", lambda: y.copy_(x)), ("mul", lambda: torch.mul(x, 1.0, out=y))):
        rate = 2 * n * 4 / _best_seconds(fn, sync)
        if rate > best:
            best, how = rate, f"{label} of {n * 4 >> 20} MiB float32, read+write"
    return best, how


def _l2(torch, dev, l2_bytes: int, sync) -> tuple[float, str]:
    """A copy between two buffers of a quarter of L2 each (both stay resident)."""
    m = max(1 << 16, l2_bytes // 4 // 4)
    a = torch.ones(m, device=dev)
    b = torch.empty_like(a)
    rate = 2 * m * 4 / _best_seconds(lambda: torch.mul(a, 1.0, out=b), sync, inner=200)
    return rate, f"mul of {m * 4 >> 10} KiB float32 (L2-resident), read+write"


def _uuid_of(props) -> str:
    """The UUID as CUPTI's agent rows spell it: "GPU-" + 8-4-4-4-12 hex digits."""
    raw = str(getattr(props, "uuid", "") or "")
    hexd = raw.replace("GPU-", "").replace("-", "")
    if len(hexd) != 32:
        return raw
    return f"GPU-{hexd[:8]}-{hexd[8:12]}-{hexd[12:16]}-{hexd[16:20]}-{hexd[20:]}"


def measure_all(force: bool = False) -> dict:
    """Measure every visible device not yet cached (all with ``force``); write and return the
    cache. Raises RuntimeError when there is no CUDA device to measure."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device visible to PyTorch")
    cache = load()
    for i in range(torch.cuda.device_count()):
        uuid = _uuid_of(torch.cuda.get_device_properties(i))
        if force or uuid not in cache:
            cache[uuid] = measure(i)
    path = cache_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump(cache, fh, indent=2)
    os.replace(tmp, path)
    return cache


def _gpus_here() -> int | None:
    """GPUs the program will see: CUDA_VISIBLE_DEVICES's count where set, else the driver's."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and not d.strip().startswith("-")])
    try:
        return len([d for d in os.listdir("/proc/driver/nvidia/gpus") if not d.startswith(".")])
    except OSError:
        return None


def for_run(timeout: float = 600.0) -> tuple[dict | None, str]:
    """(the peaks to keep with a --sol run, a note for the user or ''). Measures, in a child
    process, when the cache lacks devices of this host."""
    cache = load()
    gpus = _gpus_here()
    if gpus == 0 or (gpus is None and not cache):
        return (cache or None), ("no NVIDIA GPU here: no empirical peaks measured; `rocpd sol` "
                                 "compares with theoretical peaks only")
    if cache and (gpus is None or len(cache) >= gpus):
        return cache, ""
    print("rocprof: measuring this GPU's empirical peaks once (copy bandwidth, GEMMs; cached in "
          f"{cache_path()})", file=sys.stderr)
    try:
        p = subprocess.run([sys.executable, "-m", "rocprof.peaks"], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return (cache or None), f"empirical peaks: measurement took over {timeout:.0f} s; left out"
    if p.returncode != 0:
        why = (p.stderr.strip().splitlines() or ["unknown error"])[-1]
        return (cache or None), f"empirical peaks not measured ({why}); theoretical peaks only"
    return load() or None, ""


def format_table(cache: dict) -> str:
    from rocpd.sol_format import si

    lines = []
    for uuid, e in cache.items():
        lines.append(f"{e.get('device', '?')} ({uuid}), measured {e.get('measured', '?')}")
        lines.append(f"  DRAM bandwidth  {si(e.get('dram_bytes_per_second', float('nan')), 'B/s'):>14}"
                     f"   {e.get('method', {}).get('dram', '')}")
        lines.append(f"  L2 bandwidth    {si(e.get('l2_bytes_per_second', float('nan')), 'B/s'):>14}"
                     f"   {e.get('method', {}).get('l2', '')}")
        for key, _, _, _ in GEMMS:
            v = e.get("flops", {}).get(key)
            lines.append(f"  {key:<15} {si(v, 'FLOP/s') if v else '-':>14}   "
                         f"{e.get('method', {}).get(key, '')}")
    return "\n".join(lines) + "\n"


def main() -> int:
    try:
        cache = measure_all(force="--force" in sys.argv)
    except (ImportError, RuntimeError) as e:
        print(f"rocprof peaks: {e}", file=sys.stderr)
        return 1
    print(json.dumps(cache, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
