"""Empirical peaks of each GPU, as rocprof-compute measures its empirical roofline: each resource
by a kernel that stresses that resource, timed once per device and cached in
``~/.cache/rocprof/peaks.json`` (``rocshared.peaks.cache_path()``) keyed by the device's UUID:
- DRAM: a copy far larger than L2 (read + write);
- L2: an L2-resident vector (a quarter of L2) read again by every row of a reduction over a
  stride-0 view of it (each SM streams the whole vector through its L1: the reads hit L2), and a
  copy between two L2-resident buffers; the better of the two;
- tensor cores, per precision (FP16, BF16, TF32, FP64, INT8, FP8): torch.matmul (``torch._int_mm``,
  ``torch._scaled_mm``) at the sizes in ``GEMMS``, the best size;
- CUDA cores, per precision (FP64, FP32, FP16): a kernel of independent fused multiply-add chains
  compiled at run time with NVRTC (``torch.cuda._compile_kernel``), FLOPs counted as the
  counters count them (2 per FMA instruction); FP32 also as a non-TF32 SGEMM, the better one.
Every measurement warms the GPU up first and times batches of at least ``MIN_SECONDS`` (clocks
ramp up over the first tenths of a second), taking the best batch.

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

from rocshared import peaks as _cache
from rocshared.units import si

# (precision key in rocshared.kernel_metrics, how: torch dtype name or an op, sizes, allow TF32)
GEMMS = (("tensor_bf16", "bfloat16", (4096, 8192, 16384), False),
         ("tensor_fp16", "float16", (4096, 8192, 16384), False),
         ("tensor_tf32", "float32", (4096, 8192), True),
         ("tensor_fp64", "float64", (4096, 8192), False),
         ("tensor_int8", "int8", (4096, 8192, 16384), False),
         ("tensor_fp8", "float8_e4m3fn", (4096, 8192, 16384), False),
         ("fp32", "float32", (4096, 8192), False))
# CUDA-core precisions: (key, C type, FMA statement on x with b, c)
FMA = (("fp64", "double", "x = fma(x, b, c);"),
       ("fp32", "float", "x = fmaf(x, b, c);"),
       ("fp16", "unsigned short", 'asm("fma.rn.f16 %0, %0, %1, %2;" : "+h"(x) : "h"(b), "h"(c));'))
KEYS = ("dram", "l2", "tensor_fp64", "tensor_tf32", "tensor_bf16", "tensor_fp16", "tensor_fp8",
        "tensor_int8", "fp64", "fp32", "fp16")
MIN_SECONDS = 0.05
CHAINS = 8  # independent FMA chains per thread: enough to hide the FMA pipe's latency


def cache_path() -> str:
    return _cache.cache_path()


def load() -> dict:
    try:
        with open(cache_path()) as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _best_seconds(fn, sync, repeats: int = 5, inner: int | None = None) -> float:
    """Shortest time of one call: after a warm-up of at least 0.2 s, ``repeats`` timings of
    back-to-back calls, each batch lasting at least MIN_SECONDS (or ``inner`` calls)."""
    import time

    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-6)
    while time.perf_counter() - t0 < 0.2:  # clocks ramp up; caches and heuristics settle
        for _ in range(max(1, int(0.05 / one))):
            fn()
        sync()
    n = inner or max(1, int(MIN_SECONDS / one))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t) / n)
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
    with torch.cuda.device(dev):
        entry["dram_bytes_per_second"], entry["method"]["dram"] = _dram(torch, dev, free, sync)
        l2 = getattr(props, "L2_cache_size", 0) or (40 << 20)
        entry["l2_bytes_per_second"], entry["method"]["l2"] = _l2(torch, dev, l2, sync)
        for key, how, sizes, tf32 in GEMMS:
            _keep_best(entry, key, *_gemm(torch, dev, how, sizes, tf32, free, sync))
        for key, ctype, stmt in FMA:
            _keep_best(entry, key, *_fma(torch, dev, props, key, ctype, stmt, sync))
    torch.cuda.empty_cache()
    return entry


def _keep_best(entry: dict, key: str, rate: float | None, how: str) -> None:
    """The better of two measurements of ``key`` (fp32: SGEMM and the FMA kernel)."""
    if rate and rate > entry["flops"].get(key, 0.0):
        entry["flops"][key], entry["method"][key] = rate, how
    elif key not in entry["flops"] and key not in entry["method"]:
        entry["method"][key] = how


def _gemm(torch, dev, how: str, sizes, tf32: bool, free: int, sync) -> tuple[float | None, str]:
    """Best FLOP/s (OP/s for int8) of a square matmul over ``sizes`` that fit in memory."""
    best, label, why = 0.0, "", ""
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for n in sizes:
            dtype = getattr(torch, how, None)
            if dtype is None:
                return None, f"not measured: this PyTorch has no torch.{how}"
            if 3 * n * n * max(dtype.itemsize, 2) > 0.6 * free:
                continue
            try:
                fn = _matmul(torch, dev, dtype, n)
                secs = _best_seconds(fn, sync, repeats=3)
            except (RuntimeError, TypeError, AttributeError) as e:  # this GPU or build cannot
                why = f"not measured: {' '.join(str(e).split())[:120]}"
                break
            rate = 2.0 * n ** 3 / secs
            if rate > best:
                best, label = rate, f"torch matmul {how} {n}^3" + (" (TF32)" if tf32 else "")
            del fn
            torch.cuda.empty_cache()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    return (best, label) if best else (None, why or "not measured: no size fits in memory")


def _matmul(torch, dev, dtype, n: int):
    if dtype == torch.int8:
        a = torch.randint(-4, 4, (n, n), device=dev, dtype=torch.int8)
        b = torch.randint(-4, 4, (n, n), device=dev, dtype=torch.int8)
        return lambda: torch._int_mm(a, b)
    if str(dtype).startswith("torch.float8"):
        a = torch.randn(n, n, device=dev).to(dtype)
        b = torch.randn(n, n, device=dev).to(dtype).t()  # column-major, as _scaled_mm wants
        one = torch.ones((), device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    a = torch.randn(n, n, device=dev).to(dtype)
    b = torch.randn(n, n, device=dev).to(dtype)
    return lambda: a @ b


def fma_source(key: str, ctype: str, stmt: str) -> str:
    """A kernel of CHAINS independent FMA chains per thread, ``iters`` FMAs each; the result is
    stored so that nothing is optimised away. ``k`` holds the multiplier and the addend."""
    chains = "\n".join(f"    {{ {ctype}& x = x{i}; {stmt} }}" for i in range(CHAINS))
    init = "\n".join(f"  {ctype} x{i} = k[2 + (threadIdx.x + {i}) % 8];" for i in range(CHAINS))
    total = " + ".join(f"(double)x{i}" for i in range(CHAINS)) if ctype != "unsigned short" \
        else " ^ ".join(f"x{i}" for i in range(CHAINS))
    return (f'extern "C" __global__ void fma_{key}({ctype}* out, const {ctype}* k, int iters) {{\n'
            f"  const {ctype} b = k[0], c = k[1];\n{init}\n"
            f"  for (int i = 0; i < iters; ++i) {{\n{chains}\n  }}\n"
            f"  out[blockIdx.x * blockDim.x + threadIdx.x] = ({ctype})({total});\n}}\n")


def _fma(torch, dev, props, key: str, ctype: str, stmt: str, sync) -> tuple[float | None, str]:
    """FLOP/s of the CUDA cores in one precision: the FMA-chain kernel over every SM."""
    compile_kernel = getattr(torch.cuda, "_compile_kernel", None)
    if compile_kernel is None:
        return None, "not measured: needs torch.cuda._compile_kernel (PyTorch 2.8 or later)"
    dtype = {"double": torch.float64, "float": torch.float32, "unsigned short": torch.float16}[ctype]
    try:
        kernel = compile_kernel(fma_source(key, ctype, stmt), f"fma_{key}")
        block, blocks = 256, props.multi_processor_count * 8
        out = torch.empty(blocks * block, device=dev, dtype=dtype)
        k = torch.tensor([0.999, 1e-6] + [i * 1e-3 for i in range(8)], device=dev, dtype=dtype)
        iters = 4096
        secs = _best_seconds(lambda: kernel(grid=(blocks, 1, 1), block=(block, 1, 1),
                                            args=[out, k, iters]), sync, repeats=3)
    except (RuntimeError, OSError, TypeError, ValueError) as e:
        return None, f"not measured: {' '.join(str(e).split())[:120]}"
    flops = 2.0 * CHAINS * iters * blocks * block
    return flops / secs, (f"{CHAINS} FMA chains x {iters} per thread, {blocks}x{block} threads "
                          f"({ctype}; NVRTC)")


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
    """The better of: an L2-resident vector read by every row of a reduction over a stride-0
    view (reads only), and a copy between two L2-resident buffers (read + write)."""
    m = max(1 << 16, l2_bytes // 4 // 4)  # float32 elements: a quarter of L2
    a = torch.ones(m, device=dev)
    rows = 128
    view = a.expand(rows, m)
    out = torch.empty(rows, device=dev)
    best = rows * m * 4 / _best_seconds(lambda: torch.sum(view, dim=1, out=out), sync)
    how = f"sum over {rows} rows of one {m * 4 >> 10} KiB float32 vector (L2-resident), reads"
    b = torch.empty_like(a)
    rate = 2 * m * 4 / _best_seconds(lambda: torch.mul(a, 1.0, out=b), sync)
    if rate > best:
        best, how = rate, f"mul of {m * 4 >> 10} KiB float32 (L2-resident), read+write"
    return best, how


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
    lines = []
    for uuid, e in cache.items():
        lines.append(f"{e.get('device', '?')} ({uuid}), measured {e.get('measured', '?')}")
        lines.append(f"  {'dram':<15} {si(e.get('dram_bytes_per_second', float('nan')), 'B/s'):>14}"
                     f"   {e.get('method', {}).get('dram', '')}")
        lines.append(f"  {'l2':<15} {si(e.get('l2_bytes_per_second', float('nan')), 'B/s'):>14}"
                     f"   {e.get('method', {}).get('l2', '')}")
        for key in KEYS[2:]:
            v = e.get("flops", {}).get(key)
            unit = "OP/s" if key.endswith("int8") else "FLOP/s"
            lines.append(f"  {key:<15} {si(v, unit) if v else '-':>14}   "
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
