"""Something to do to a module right after it is first imported: now, if it is imported already,
else by a meta path finder that wraps the module's loading once and then steps aside. Shared by
the hooks that must wait for torch (autograd_sites, module_trace).

The finder needs only find_spec: importlib.abc is not imported for its base class, which would
cost every profiled process a few milliseconds at start; importlib.machinery is imported when
the module is found, not before (every followed child of a GPU-traced run installs a hook).
"""

from __future__ import annotations

import sys


class AfterImport:
    """Runs ``then(module)`` once ``name`` is imported (``ready(module)``: whether a module found
    in sys.modules is far enough through its own import to be used now)."""

    def __init__(self, name: str, then, ready=None):
        self.name = name
        self.then = then
        self.ready = ready

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then(module):
            exec_module(module)
            self.uninstall()
            self.then(module)

        spec.loader.exec_module = exec_then
        return spec

    def install(self) -> None:
        module = sys.modules.get(self.name)
        if module is not None and (self.ready is None or self.ready(module)):
            self.then(module)
        elif self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
