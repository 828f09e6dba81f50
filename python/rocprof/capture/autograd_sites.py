"""A Python line for the GPU work of a backward pass.

PyTorch runs ``loss.backward()`` (and ``torch.autograd.grad``) on its own per-device threads while
the calling thread waits: those threads have no Python frames, so the kernels they launch would
carry no launch site. While a backward call runs, the calling thread lends its Python frames
(``rocprof._core._launch_site_lend``) to every launch made on a thread without Python frames: the
backward kernels get the line of the ``backward()`` call — where the step's backward pass was
started, not the forward operation each kernel differentiates (that would need PyTorch's
per-operation hooks on every op of the forward pass, whose cost torch.profiler shows).

Installed once per process when GPU tracing with launch sites starts: ``torch.autograd``'s
``backward`` and ``grad`` are wrapped (``Tensor.backward`` calls ``torch.autograd.backward``),
now if torch is already imported, else when it is. The wrapper costs one walk of the caller's
frames per backward call. Several threads running backward passes at once share one lent site
(the last one lent).
"""

from __future__ import annotations

import functools
import importlib.machinery
import sys

from .. import _core

_MARK = "__rocprof_lends_launch_site__"


def _lending(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        previous = _core._launch_site_lend()
        try:
            return fn(*args, **kwargs)
        finally:
            _core._launch_site_restore(previous)

    setattr(wrapper, _MARK, True)
    return wrapper


def patch(autograd) -> None:
    for name in ("backward", "grad"):
        fn = getattr(autograd, name, None)
        if callable(fn) and not getattr(fn, _MARK, False):
            setattr(autograd, name, _lending(fn))


class _Hook:
    """Patches torch.autograd right after it is first imported, then steps aside. (A meta path
    finder needs only find_spec; importlib.abc is not imported for its base class, which would
    cost every profiled process a few milliseconds at start.)"""

    def find_spec(self, name, path, target=None):
        if name != "torch.autograd":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            uninstall()
            patch(module)

        spec.loader.exec_module = exec_and_patch
        return spec


_hook = _Hook()


def install() -> None:
    if "torch.autograd" in sys.modules:
        patch(sys.modules["torch.autograd"])
    elif _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)


def uninstall() -> None:
    if _hook in sys.meta_path:
        sys.meta_path.remove(_hook)
