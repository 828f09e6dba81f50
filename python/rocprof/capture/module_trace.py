"""--module-trace: every GPU launch names the ``nn.Module`` path active at it.

While a module's forward runs, a ROCTx range ``nn.Module: <path>`` is open on its thread
(global forward pre/post hooks of torch.nn; the range push/pop are rocprof._core's C calls), so
each kernel's innermost range (``kernels.roctx_range``) is the innermost module around its
launch, and a CUDA graph's replayed kernels carry the module of their capture. The path is the
root module's class name then the attribute names down to the module, as ``named_modules()``
gives them: ``Transformer.layers.3.attn.proj``; a module called that is no attribute of the
root (a functional helper's) is its class name under the calling module's path.

A user's own ROCTx range opened inside a module is the innermost range of what it launches
(``rocpd summary --by module`` counts that work under "(not in a module)"). Inside
torch.compile'd code the hooks do nothing (the compiled graph has no module calls at run time).
Installed when the session starts (now if torch is imported, else when it is); removed at stop.
"""

from __future__ import annotations

import threading
import weakref

from .. import _core
from .import_hook import AfterImport

PREFIX = "nn.Module: "

_tls = threading.local()
_names: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # root → {id(module): name}
_handles: list = []


def _stack() -> list:
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


def path_of(module, stack: list) -> tuple[object, str]:
    """(root, path) of `module` called inside the modules on `stack` ((root, path, id))."""
    if not stack:
        return module, type(module).__name__
    root, parent, _ = stack[-1]
    names = _names.get(root)
    if names is None:
        names = {id(m): n for n, m in root.named_modules() if n}
        _names[root] = names
    name = names.get(id(module))
    if name is not None:
        return root, f"{type(root).__name__}.{name}"
    return root, f"{parent}.{type(module).__name__}"


def _hooks():
    import torch

    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
    push, pop = _core.push, _core.pop

    def pre(module, args):
        if compiling():
            return
        stack = _stack()
        root, path = path_of(module, stack)
        stack.append((root, path, id(module)))
        push(PREFIX + path)

    def post(module, args, output):
        if compiling():
            return
        stack = _stack()
        if stack and stack[-1][2] == id(module):  # not a module entered before install
            stack.pop()
            pop()

    return pre, post


def _register(torch_nn_module) -> None:
    if _handles:
        return
    pre, post = _hooks()
    _handles.append(torch_nn_module.register_module_forward_pre_hook(pre))
    try:  # always_call: the range closes when forward raises too (torch >= 2.1)
        _handles.append(torch_nn_module.register_module_forward_hook(post, always_call=True))
    except TypeError:
        _handles.append(torch_nn_module.register_module_forward_hook(post))


_hook = AfterImport("torch.nn.modules.module", _register,
                    ready=lambda module: hasattr(module, "register_module_forward_hook"))
install = _hook.install


def uninstall() -> None:
    _hook.uninstall()
    while _handles:
        _handles.pop().remove()
