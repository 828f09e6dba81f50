"""AMD PC sampling through rocprofiler-sdk (native part: cpp/capture/rocprofiler_sdk/):
Options → "pc_sampling.*" settings, and the environment that makes rocprofiler-sdk load
rocprof's tool.

rocprofiler-sdk loads its tools itself: when the HSA runtime starts (the program's first
hsa_init) rocprofiler-register loads the SDK if ROCP_TOOL_LIBRARIES names a tool, and the SDK
calls that tool's rocprofiler_configure. So, like HSA_TOOLS_LIB (rocprof.capture.hsa), the
variable must be set before the program first uses the GPU: `rocprof run` sets it for the script
it runs in this process and for every command it starts. It is set only when PC sampling is
asked for: a loaded rocprofiler-sdk intercepts the runtime.

Not run on AMD hardware: tested against the test-only stand-in SDK of tests/amd_standin.
"""

from __future__ import annotations

import glob
import os

from .._libs import already_mapped, library_dir
from ..options import Options
from . import pc_sampling

TOOL_LIBRARY = "librocprof_sdk.so"
VARIABLE = "ROCP_TOOL_LIBRARIES"
_LIB = "librocprofiler-sdk.so"


def tool_path() -> str:
    return os.path.join(library_dir(), TOOL_LIBRARY)


def tool_environment(environ: dict | None = None) -> dict[str, str]:
    """ROCP_TOOL_LIBRARIES with our tool added (tools already named stay). The SDK splits it at
    ':' and rocprofiler-sdk 1.0 drops the last entry of a list of several, so such a list ends
    with ':'."""
    environ = os.environ if environ is None else environ
    tools = [t for t in environ.get(VARIABLE, "").split(":") if t]
    ours = tool_path()
    if not any(os.path.realpath(t) == os.path.realpath(ours) for t in tools):
        tools.append(ours)
    return {VARIABLE: ":".join(tools) + (":" if len(tools) > 1 else "")}


def configure(options: Options, settings) -> list[str]:
    """Fill settings.pc_sampling and set the tool's environment."""
    pc_sampling.fill(options, settings)
    notes = []
    if already_mapped("libhsa-runtime64") and TOOL_LIBRARY not in os.environ.get(VARIABLE, ""):
        notes.append("the HSA runtime was loaded before profiling started, so rocprofiler-sdk "
                     "cannot load rocprof's tool and AMD GPUs are not PC-sampled: run under "
                     f"`rocprof run`, or set {VARIABLE}={tool_path()} before the program first "
                     "uses the GPU")
    os.environ.update(tool_environment())
    return notes


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """A command's processes load our tool through rocprofiler-sdk's variable."""
    if options.pc_sampling and VARIABLE in os.environ and TOOL_LIBRARY in os.environ[VARIABLE]:
        env.update(tool_environment(env))
    return []


def find_sdk() -> str | None:
    """The rocprofiler-sdk library on this machine, or None."""
    import ctypes.util  # imports subprocess: only when asked

    roots = [os.environ.get("ROCM_PATH"), "/opt/rocm"]
    for root in filter(None, roots):
        hits = sorted(glob.glob(os.path.join(root, "lib", _LIB + "*")))
        if hits:
            return hits[0]
    return ctypes.util.find_library("rocprofiler-sdk")


def reason() -> str:
    """Why a build without the backend has no AMD PC sampler, on this machine (rocprof info)."""
    found = find_sdk()
    if found is None:
        return "PC sampling on AMD needs rocprofiler-sdk (ROCm >= 6.2); not run on AMD hardware"
    return (f"rocprofiler-sdk is here ({found}) but this build has no AMD PC-sampling backend "
            "(rocprofiler-sdk headers needed at build time); not run on AMD hardware")
