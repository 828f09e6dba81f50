"""Launches kernels on the TEST-ONLY stand-in HIP runtime (tests/amd_standin) from Python
through ctypes, so each dispatch's Python launch site can be checked. argv: the stand-in
libamdhip64 path, then optionally "hold-gil": the calls keep the GIL and no other thread gets
it while the script runs, and the script ends with its 0.3 s kernels still running (the session's
stop waits for them): its launch sites are resolved only after it has returned, and no record
waits for one meanwhile; or "hold-gil-busy": the calls keep the GIL, the script waits for its
kernels and then computes for 1 s, so each record is written while no thread can resolve its
site (each goes without, counted)."""

import ctypes
import sys
import time

MODE = sys.argv[2] if len(sys.argv) > 2 else ""
HOLD_GIL = MODE in ("hold-gil", "hold-gil-busy")
if HOLD_GIL:
    sys.setswitchinterval(1000.0)
hip = (ctypes.PyDLL if HOLD_GIL else ctypes.CDLL)(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
CODE = b"ROCPROF-STANDIN-CO\n_Z6scalePfi %d 0 0 16\n" % (300_000_000 if MODE == "hold-gil" else 100_000)
vp = ctypes.c_void_p
assert hip.hipInit(0) == 0
stream, module, fn = vp(), vp(), vp()
assert hip.hipStreamCreate(ctypes.byref(stream)) == 0
assert hip.hipModuleLoadData(ctypes.byref(module), CODE) == 0
assert hip.hipModuleGetFunction(ctypes.byref(fn), module, b"_Z6scalePfi") == 0
u = ctypes.c_uint


def launch():
    return hip.hipModuleLaunchKernel(fn, u(4), u(1), u(1), u(64), u(1), u(1), u(0), stream, None, None)


for _ in range(3):
    assert launch() == 0  # LAUNCH LINE
if MODE != "hold-gil":
    assert hip.hipStreamSynchronize(stream) == 0
if MODE == "hold-gil-busy":
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        pass
