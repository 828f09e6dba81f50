"""AMD GPU tracing (native part: cpp/capture/hsa/): Options → "hsa.*" settings, and the
environment that makes the HSA runtime load rocprof's tool.

The HSA runtime loads the libraries named in HSA_TOOLS_LIB inside the program's first
hsa_init and calls their OnLoad with its API table: that is where kernel, copy, allocation and
HSA/HIP API tracing start. So the variable must be set before the program first uses the GPU:
`rocprof run` sets it for the script it runs in this process and for every command it starts.
ROCm >= 6.1 also needs HSA_TOOLS_ROCPROFILER_V1_TOOLS=1, or rocprofiler-register keeps such
tools from loading.

Not yet run on AMD hardware: tested against the software stand-in runtime of tests/amd_standin.
"""

from __future__ import annotations

import os

from .. import _core
from .._libs import already_mapped, library_dir
from ..options import Options
from . import autograd_sites, cupti

TOOL_LIBRARY = "librocprof_hsa.so"
# What command_environment copies into a command's environment (rocprof run -- CMD).
TOOL_VARIABLES = ("HSA_TOOLS_LIB", "HSA_TOOLS_ROCPROFILER_V1_TOOLS")


def tool_path() -> str:
    return os.path.join(library_dir(), TOOL_LIBRARY)


def tool_entry() -> str:
    """Our tool as HSA_TOOLS_LIB names it. The runtime splits the variable at spaces, so a tool
    under a folder whose path has one (a checkout or venv in "My Projects/") is named by its
    file name alone: the dynamic loader then finds it in LD_LIBRARY_PATH (set for commands) or
    as the library of that name already loaded (this process loads it first: configure)."""
    path = tool_path()
    return TOOL_LIBRARY if any(c.isspace() for c in path) else path


def tool_environment(environ: dict | None = None) -> dict[str, str]:
    """HSA_TOOLS_LIB with our tool added (tools already named stay, space-separated, as the
    runtime reads them) and the ROCm >= 6.1 switch that keeps such tools loaded."""
    environ = os.environ if environ is None else environ
    tools = environ.get("HSA_TOOLS_LIB", "").split()
    ours, entry = tool_path(), tool_entry()
    if not any(t == entry or os.path.realpath(t) == os.path.realpath(ours) for t in tools):
        tools.append(entry)
    return {"HSA_TOOLS_LIB": " ".join(tools), "HSA_TOOLS_ROCPROFILER_V1_TOOLS": "1"}


_loaded_by_name: list = []  # keeps the tool mapped for the runtime's dlopen by file name


def _hsa_already_loaded() -> bool:
    """Whether this process already mapped an HSA runtime (the tool would come too late)."""
    return already_mapped("libhsa-runtime64")


def configure(options: Options, settings) -> list[str]:
    """Fill settings.hsa (rocprof._core.HsaSettings) and set the tool's environment."""
    h = settings.hsa
    h.enabled = True
    # The activities it serves (runtime_api is HIP's API here: hsa_backend.cpp maps it).
    asked = options.activities()
    h.activities = [a for a in h.SUPPORTED if a in asked]
    h.launch_sites = True
    autograd_sites.install()  # backward kernels: their forward op's line, or backward()'s
    if hasattr(_core, "_hsa_set_callsite_prefixes"):
        _core._hsa_set_callsite_prefixes("\n".join(cupti.library_prefixes(options.site_filter)))
    notes = []
    if _hsa_already_loaded() and "librocprof_hsa" not in os.environ.get("HSA_TOOLS_LIB", ""):
        notes.append("the HSA runtime was loaded before profiling started, so AMD GPU work is "
                     "not traced: run under `rocprof run`, or set HSA_TOOLS_LIB="
                     f"{tool_path()} before the program first uses the GPU")
    _load_by_name()
    os.environ.update(tool_environment())
    return notes


def _load_by_name() -> None:
    if tool_entry() != tool_path() and not _loaded_by_name:
        import ctypes

        _loaded_by_name.append(ctypes.CDLL(tool_path()))



def in_child(settings, spec) -> None:
    """A followed Python child (rocprof.children): the launch sites' library code, and the tool
    mapped by file name where its path has a space (configure)."""
    if hasattr(_core, "_hsa_set_callsite_prefixes"):
        _core._hsa_set_callsite_prefixes(spec.site_prefixes())
    _load_by_name()


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """A command's processes load our tool through the HSA runtime's variables."""
    if settings.hsa.enabled:
        env.update(tool_environment(env))
    return []
