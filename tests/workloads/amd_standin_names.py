"""Launches one dispatch of each kernel symbol named on the command line on the TEST-ONLY
stand-in HIP runtime (tests/amd_standin), through ctypes. argv: the stand-in libamdhip64 path,
then the kernels' (mangled) symbols."""

import ctypes
import sys

hip = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
symbols = sys.argv[2:]
code = "ROCPROF-STANDIN-CO\n" + "".join(f"{s} 1000 0 0 16\n" for s in symbols)
vp, u = ctypes.c_void_p, ctypes.c_uint
assert hip.hipInit(0) == 0
stream, module = vp(), vp()
assert hip.hipStreamCreate(ctypes.byref(stream)) == 0
assert hip.hipModuleLoadData(ctypes.byref(module), code.encode()) == 0
for symbol in symbols:
    fn = vp()
    assert hip.hipModuleGetFunction(ctypes.byref(fn), module, symbol.encode()) == 0
    assert hip.hipModuleLaunchKernel(fn, u(1), u(1), u(1), u(64), u(1), u(1), u(0), stream,
                                     None, None) == 0
assert hip.hipStreamSynchronize(stream) == 0
