"""A Python line for the GPU work of a backward pass: the line of the forward op it
differentiates, else the line of the ``backward()`` call.

PyTorch runs ``loss.backward()`` (and ``torch.autograd.grad``) on its own per-device threads while
the calling thread waits: those threads have no Python frames, so the kernels they launch would
carry no launch site. Two things give them one:

- ``rocprof._torch_observer`` (built against the torch of the build's Python; cpp/capture/torch/)
  follows PyTorch's RecordFunction: each forward op's Python frames are kept under its autograd
  sequence number, and while a backward op runs, launches on its thread take its forward op's
  line, the site naming the op as ``"backward_of"`` (``aten::mm``). It is on only while launch
  sites are (GPU tracing), and costs every op of the program a RecordFunction call (measured by
  benchmarks/torch_observer_cost.py).
- For the rest (ops made outside a forward op, such as gradient accumulation, a forward op not on
  record, or no observer in this build), the calling thread lends its Python frames
  (``rocprof._core._launch_site_lend``) while a backward call runs: those kernels get the line of
  the ``backward()`` call.

Installed once per process when GPU tracing with launch sites starts: ``torch.autograd``'s
``backward`` and ``grad`` are wrapped (``Tensor.backward`` calls ``torch.autograd.backward``) and
the observer attached, now if torch is already imported, else when it is. The wrapper costs one
walk of the caller's frames per backward call. Several threads running backward passes at once
share one lent site (the last one lent).
"""

from __future__ import annotations

import sys

from .. import _core
from .import_hook import AfterImport

_MARK = "__rocprof_lends_launch_site__"


def _lending(fn):
    # functools is imported where used, once torch is: every followed child of a GPU-traced run
    # installs the hook, and would load it (with collections: 15 M instructions) before its
    # program starts.
    import functools

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
    attach_observer()


_observer_state: list = []  # [the module] once attached, [None] when it cannot be


def observer_unavailable() -> str:
    """Why this process cannot link backward ops to forward ops ('' when it can): the observer
    must be built against this very torch (its C++ layout and ABI)."""
    built = _core.torch_observer_build()
    if not built["torch"]:
        return f"rocprof._torch_observer is not built ({built['reason']})"
    from torch import torch_version  # a plain module: importable while torch itself imports

    here = str(torch_version.__version__)
    if here != built["torch"]:
        return (f"rocprof._torch_observer was built against torch {built['torch']}, this is "
                f"torch {here} (rebuild rocprof)")
    return ""


def attach_observer():
    """Attaches rocprof._torch_observer to the launch sites (once; torch is imported). Returns
    the module, or None: a build without it says so in `rocprof info`; one that has it but cannot
    use it says why on stderr (backward kernels keep the line of their backward() call)."""
    if _observer_state:
        return _observer_state[0]
    if not _core.torch_observer_build()["torch"]:
        _observer_state.append(None)
        return None
    why = observer_unavailable()
    module = None
    if not why:
        try:
            from rocprof import _torch_observer

            _torch_observer.attach(_core._launch_site_api())
            module = _torch_observer
        except (ImportError, RuntimeError) as e:
            why = f"rocprof._torch_observer did not load ({e})"
    if why:
        print(f"rocprof: backward kernels carry their backward() call's line, not their forward "
              f"op's: {why}", file=sys.stderr)
    _observer_state.append(module)
    return module


_hook = AfterImport("torch.autograd", patch)
install = _hook.install
uninstall = _hook.uninstall
