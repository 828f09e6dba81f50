"""B5 on the CPU box: a database shaped like the GPU host's transformer run, written by the real
writer, then measured by gpu_b5_bytes.py (bytes per record, per table and index).

The B5 goal's workload (`torch_steps.py --model transformer`, 100 steps + 30 warm-up) can only
be recorded on the GPU host. Its records go here through `rocpd.testing.DatabaseBuilder` (the
C++ RocpdSink, mapping and writer a session uses) with the same mix and value ranges: ~306
kernels per step from ~60 Python launch sites, a third launched by the autograd thread; the
forward/backward/optimizer ROCTx ranges per step, kernels of the main thread inside them;
0.12 copies and sets per kernel; CLOCK_BOOTTIME timestamps of a host up ~1 day; and with
`--sys-trace` the runtime/driver calls that survive the query filter (cudaLaunchKernel 0.77,
cuLaunchKernelEx 0.22, cudaMemsetAsync 0.09, cuKernelSetAttribute 0.05, cudaMemcpyAsync 0.04
per kernel), sharing the kernels' correlation ids and launch sites. The launch sites are the
workload's own: its model code (tests/gpu/workloads/torch_steps.py) run on the CPU under
`rocprof run`, as on the GPU host, each aten op's Python frames resolved by the real launch-site
capture (backward ops named by their forward op through the torch observer); without torch or a
CUPTI build, made-up one-frame sites (which understate the string table). A stand-in: the GPU
host's own figure comes from `gpu_b5_bytes.py` over a real run there.

    PYTHONPATH=python:. python3 benchmarks/b5_standin.py [--steps 130] [--sys-trace] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

import gpu_b5_bytes  # noqa: E402

KERNELS_PER_STEP = 306
SITES = 60
API_PER_KERNEL = (("cudaLaunchKernel", 0.77), ("cuLaunchKernelEx", 0.22),
                  ("cudaMemsetAsync", 0.09), ("cuKernelSetAttribute", 0.05),
                  ("cudaMemcpyAsync", 0.04))


# Frames of the capture's own dispatch hook (not there when a GPU launch is recorded).
_HOOK_FILES = (str(HERE), "/torch/_dynamo/", "/torch/_compile.py", "/torch/utils/_python_dispatch.py")


def _without_hook(text: str) -> str:
    frames = json.loads(text)
    inner = frames[0].get("library_frames", [])
    while inner and any(h in inner[0]["file"] for h in _HOOK_FILES):
        inner.pop(0)
    if not inner:
        frames[0].pop("library_frames", None)
    return json.dumps(frames, separators=(",", ":"))


def capture_sites(out: str, steps: int = 2) -> None:
    """--capture-sites: the transformer's launch sites ({"main": [...], "autograd": [...]}, JSON
    lists of frames): its steps run on the CPU, each aten op's frames taken by the launch-site
    capture (_core._launch_site_here) from a dispatch hook, and backward ops' sites as the
    torch observer gives them to autograd's threads."""
    import torch
    from rocprof import _core
    from rocprof.capture import autograd_sites, cupti
    from torch.utils._python_dispatch import TorchDispatchMode

    sys.path.insert(0, str(HERE.parents[1] / "tests" / "gpu" / "workloads"))
    import torch_steps

    _core._cupti_set_callsite_prefixes("\n".join([*cupti.library_prefixes(), str(HERE)]))
    _core._launch_sites_start()
    autograd_sites.install()
    observer = autograd_sites.attach_observer()
    found = {"main": {}, "autograd": {}}

    class Hook(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            backward = torch._C._current_autograd_node() is not None
            if not (backward and observer is not None):
                _key, sid, text = _core._launch_site_here()
                if sid:
                    found["autograd" if backward else "main"][_without_hook(text)] = 1
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    model = torch_steps.Transformer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x, y = torch.randn(16, 128, 64), torch.randint(0, 100, (16,))
    if observer is not None:
        observer._debug_start(1 << 18)
    with Hook():
        for _ in range(steps):
            torch_steps.step(model, opt, x, y)
    if observer is not None:
        for kind, _name, _seq, key in observer._debug_stop():
            text = _core._launch_site_json(key) if kind == "B" and key else ""
            if text:
                found["autograd"][_without_hook(text)] = 1
    _core._launch_sites_stop()
    with open(out, "w") as f:
        json.dump({k: list(v) for k, v in found.items()}, f)


def real_sites() -> dict | None:
    """The workload's launch sites (capture_sites, under `rocprof run` as the GPU host's run is,
    so the launcher's frames are outward of them), or None where they cannot be captured."""
    try:
        import torch  # noqa: F401
        from rocprof import _core
    except ImportError:
        return None
    if not hasattr(_core, "_launch_site_here"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sites.json")
        r = subprocess.run([sys.executable, "-m", "rocprof", "run", "-d", tmp, "-o", "capture",
                            str(HERE), "--capture-sites", out], capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0 or not os.path.exists(out):
            print(f"b5_standin: capturing the launch sites failed ({r.stderr.strip()[-300:]})")
            return None
        with open(out) as f:
            return json.load(f)


def build(path: str, steps: int, sys_trace: bool, seed: int = 1, captured: dict | None = None) -> None:
    from rocpd.testing import DatabaseBuilder

    rng = random.Random(seed)
    pid = 48213
    autograd = pid + 37
    names = [f"void at::native::kernel_{i}<float, {i % 7}>(at::TensorIterator)" for i in range(90)]
    made_up = [("/home/user/model/transformer.py", 40 + i, f"layer{i % 12}") for i in range(SITES)]
    by_thread = {pid: (captured or {}).get("main") or made_up,
                 autograd: (captured or {}).get("autograd") or made_up}
    shapes = [((rng.choice((64, 128, 256, 512, 1024, 4096, 30720)), rng.choice((1, 1, 8, 32)), 1),
               (rng.choice((128, 256, 512)), 1, 1)) for _ in names]
    t = 86_400_000_000_000 + 123_456_789  # a day of CLOCK_BOOTTIME
    with DatabaseBuilder(path, pid=pid, hostname="gpu-host") as b:
        b.thread(autograd, "autograd")
        for _ in range(steps):
            phases = (("forward", pid, 0.40), ("backward", autograd, 0.45), ("optimizer", pid, 0.15))
            for phase, tid, share in phases:
                n = round(KERNELS_PER_STEP * share)
                p0 = t
                rng_corr = b.marker(phase, p0, p0 + n * 40_000 + 5_000, tid=pid)
                for _ in range(n):
                    k = rng.randrange(len(names))
                    corr = b.next_correlation()
                    site = rng.choice(by_thread[tid])
                    launch = t + rng.randrange(2_000, 9_000)
                    if sys_trace:
                        r = rng.random()
                        acc = 0.0
                        for fn, share_api in API_PER_KERNEL:
                            acc += share_api
                            if r < acc:
                                cat = "CUDA_DRIVER_API" if fn.startswith("cu") and \
                                    not fn.startswith("cuda") else "CUDA_RUNTIME_API"
                                b.region(cat, fn, launch, launch + rng.randrange(3_000, 9_000),
                                         tid=tid, correlation_id=corr, site=site,
                                         range_corr=rng_corr if tid == pid else 0)
                                break
                    grid, block = shapes[k]
                    start = launch + rng.randrange(5_000, 40_000)
                    b.kernel(names[k], start, start + rng.randrange(2_000, 60_000), tid=tid,
                             correlation_id=corr, grid=grid, block=block, stream=7,
                             range_corr=rng_corr if tid == pid else 0, site=site)
                    if rng.random() < 0.12:
                        c = b.next_correlation()
                        b.memory_copy("MEMORY_SET" if rng.random() < 0.7 else
                                      "MEMORY_COPY_HOST_TO_DEVICE", start + 100, start + 3_000,
                                      4096 * rng.randrange(1, 256), tid=tid, correlation_id=c,
                                      stream=7, site=site, memset=rng.random() < 0.7)
                    t += 40_000
            t += 1_000_000
        b.close(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=130)
    ap.add_argument("--sys-trace", action="store_true")
    ap.add_argument("--keep", help="folder to keep the database in")
    ap.add_argument("--no-vacuum", action="store_true", help="skip the VACUUM what-ifs")
    ap.add_argument("--capture-sites", metavar="JSON", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.capture_sites:
        capture_sites(a.capture_sites)
        return 0
    captured = real_sites()
    n = {k: len(v) for k, v in (captured or {}).items()}
    print(f"launch sites: {'captured from the workload ' + str(n) if captured else 'made up (one frame each)'}")
    folder = a.keep or tempfile.mkdtemp(prefix="b5-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"transformer_{'systrace' if a.sys_trace else 'default'}.db")
    if os.path.exists(path):
        os.remove(path)
    build(path, a.steps, a.sys_trace, captured=captured)
    gpu_b5_bytes.report(path, vacuum=not a.no_vacuum)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
