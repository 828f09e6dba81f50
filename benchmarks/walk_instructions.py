"""Instructions per Python frame walk, counted by callgrind: the sampler's full walk
(rp_walk_current, in every SIGPROF handler and a launch's first sight of its chain) and the
torch observer's key walk (rp_walk_keys_current, at every forward op), at two chain depths.
Counts are exact and repeatable, so two builds compare on a shared box where wall time cannot.

    PYTHONPATH=python:. python3 benchmarks/walk_instructions.py [--baseline DIR] [--record]

Needs valgrind, the CUPTI backend's launch-site hooks (a build with CUDA headers) and a _core
with its symbol table: pybind11 strips Release modules, so configure the build with
-DCMAKE_STRIP=/bin/true. `--baseline DIR`: another built checkout, counted the same way.
Each figure is the difference of two runs (3000 and 1000 walks) over 2000: the start-up's
one-off walks cancel out."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, append_row

WALKS = {"full": "rp_walk_current", "keys": "rp_walk_keys_current"}
DEPTHS = (5, 35)
RUNS = (1000, 3000)


def _observer_forward(core):
    """capture_forward through the capsule the torch observer takes it from (a baseline built
    before _core had a hook for it)."""
    import ctypes

    class Api(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32),
                    ("capture_forward", ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_char_p)),
                    ("other_services", ctypes.c_void_p * 3)]

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = Api.from_address(get(core._launch_site_api(), b"rocprof._core.launch_site_api"))
    return api.capture_forward


def drive(walk: str, depth: int, n: int) -> None:
    """In the measured process: `n` walks of `walk` with `depth` Python frames on the stack
    (the full walk through a launch's capture, the key walk through a forward op's)."""
    from rocprof import _core
    from rocprof.capture import cupti

    _core._cupti_set_callsite_prefixes("\n".join(cupti.library_prefixes()))
    _core._launch_sites_start()

    if hasattr(_core, "_launch_site_forward"):
        forward, op = _core._launch_site_forward, "aten::mul"
    else:
        forward, op = _observer_forward(_core), b"aten::mul"

    def leaf():  # the walks' callers add no Python frame
        for _ in range(n):
            forward(op) if walk == "keys" else _core._launch_site_here()

    def down(k):
        return leaf() if k == 0 else down(k - 1)

    base, f = 0, sys._getframe()
    while f is not None:
        base, f = base + 1, f.f_back
    down(depth - base - 2)  # leaf + down frames + this and its callers: `depth` frames
    _core._launch_sites_stop()


def count(tree: Path, walk: str, depth: int, n: int) -> int:
    env = dict(os.environ, PYTHONPATH=f"{tree / 'python'}{os.pathsep}{tree}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={WALKS[walk]}",
                        f"--callgrind-out-file={out}", sys.executable, __file__, "--drive", walk,
                        str(depth), str(n)], env=env, check=True, capture_output=True, timeout=600)
        m = re.search(r"^summary: (\d+)", out.read_text(), re.M)
    return int(m.group(1)) if m else 0


def per_walk(tree: Path, walk: str, depth: int) -> float:
    few, many = (count(tree, walk, depth, n) for n in RUNS)
    if many == 0:
        sys.exit(f"walk_instructions: no instructions counted in {WALKS[walk]} of {tree}: its "
                 "_core has no symbol table (configure with -DCMAKE_STRIP=/bin/true)")
    return (many - few) / (RUNS[1] - RUNS[0])


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--drive":
        drive(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, help="another built checkout, counted the same way")
    ap.add_argument("--record", action="store_true", help="append the figures to RESULTS.md")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("walk_instructions: valgrind not found (apt-get install valgrind)")
    trees = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    py = f"CPython {sys.version_info[0]}.{sys.version_info[1]}"
    print(f"instructions per walk ({py}), frames on the stack: " + ", ".join(map(str, DEPTHS)))
    figures = []
    for name, tree in trees:
        for walk in WALKS:
            got = [per_walk(tree, walk, d) for d in DEPTHS]
            print(f"{name:9} {walk:5} " + "  ".join(f"{g:8.1f}" for g in got))
            figures.append(f"{name} {walk} " + "/".join(f"{g:.0f}" for g in got))
    append_row("Frame walks: instructions per walk (callgrind)", f"{py}, depths "
               f"{'/'.join(map(str, DEPTHS))}: " + "; ".join(figures))


if __name__ == "__main__":
    main()
