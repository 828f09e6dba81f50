"""Started in every Python child of a `rocprof run` (subprocess, torchrun ranks, spawn
workers): the launcher puts this folder first on PYTHONPATH and describes the session in
ROCPROF_CHILD_SESSION, so the child records into its own database.

Python imports one module named sitecustomize, so a user's own is found and run afterwards.
"""

import os
import sys


def _start() -> None:
    spec = os.environ.get("ROCPROF_CHILD_SESSION")
    if not spec:
        return
    try:
        # As in the launcher (rocprof/start_up.py): no cyclic collection while the session
        # starts, and its objects frozen for the program, whose collections (and the one at
        # exit) never walk them.
        from rocprof import start_up

        start_up.begin()
    except Exception:  # noqa: BLE001 - the collector as it was
        start_up = None
    try:
        from rocprof.children import start_child_session

        start_child_session(spec)
    except Exception as e:  # noqa: BLE001 - never break the child program
        print(f"rocprof: not profiling child process {os.getpid()}: {e}", file=sys.stderr)
    finally:
        if start_up is not None:
            start_up.program_starts()


def _chain_user_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    try:  # importlib.machinery's and importlib.util's own, loaded at start-up already:
        # importing importlib (with warnings) costs each child a few milliseconds
        from _frozen_importlib import module_from_spec
        from _frozen_importlib_external import PathFinder
    except ImportError:  # not CPython
        from importlib.machinery import PathFinder
        from importlib.util import module_from_spec

    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start()
_chain_user_sitecustomize()
