"""Collective calls (--rccl-trace / --nccl-trace; native part: cpp/capture/nccl/).

NCCL (>= 2.27) loads the profiler plugin named in NCCL_PROFILER_PLUGIN when a process creates
its first communicator, so the variable is set here, before the program starts: in this
process's environment (the script run in-process, and every child it starts, inherits it) and
in the environment of a command `rocprof run -- CMD` starts. The plugin records into the
session of the process that loaded it.

AMD: RCCL, NCCL's port, carries the same profiler plugin interface (ROCm/rccl
src/plugin/profiler.cc loads ncclProfiler_v5 ... _v1 from NCCL_PROFILER_PLUGIN), so the same
plugin and variable serve it; not yet run on AMD hardware. (rocprofv3 traces RCCL through
rocprofiler-sdk's RCCL_API domain instead, a client this project has not written.)
"""

from __future__ import annotations

import os

from .. import backends
from .._libs import library_dir
from ..options import Options

PLUGIN_LIBRARY = backends.get("nccl").library
VARIABLE = "NCCL_PROFILER_PLUGIN"
# rocprof.nccl.plugin until NCCL loads the plugin (which then replaces it with its interface).
METADATA_TAG = "rocprof.nccl.plugin"
NOT_LOADED = ("not loaded: NCCL never loaded the profiler plugin (NCCL older than 2.27, "
              "NCCL_PROFILER_PLUGIN set to another plugin, or no communicator created); "
              "collectives are in the kernels only")


def plugin_path() -> str:
    return os.path.join(library_dir(), PLUGIN_LIBRARY)


def environment(environ: dict | None = None) -> tuple[dict[str, str], list[str]]:
    """NCCL_PROFILER_PLUGIN naming our plugin, and notes. A plugin the user named already is
    kept (NCCL loads one profiler plugin): collectives are then kernels only."""
    environ = os.environ if environ is None else environ
    ours = plugin_path()
    if not os.path.exists(ours):  # the backend's status says so (backends.statuses)
        return {}, []
    current = environ.get(VARIABLE)
    if current and os.path.realpath(current) != os.path.realpath(ours):
        return {}, [f"--rccl-trace: {VARIABLE} is already set ({current}); NCCL loads one "
                    "profiler plugin, so collective calls are not traced (kernels only)"]
    return {VARIABLE: ours}, []


def _asked(options: Options) -> bool:
    return "collectives" in options.activities()


def configure(options: Options, settings) -> list[str]:
    """This process's environment, which the script run in-process and its children inherit."""
    if not _asked(options):
        return []
    env, notes = environment()
    os.environ.update(env)
    return notes


def child_environment(options: Options, settings, env: dict) -> list[str]:
    """A command's processes: NCCL reads the variable when it creates its first communicator.
    configure() has said already what keeps the plugin out, so no notes twice."""
    if _asked(options):
        env.update(environment(env)[0])
    return []
