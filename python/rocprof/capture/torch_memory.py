"""PyTorch's caching allocator, action by action (native part: cpp/capture/python/torch_memory.*
in rocprof._core, the hook in rocprof._torch_observer: cpp/capture/torch/memory.*).

On with ``--memory-allocation-trace`` (and ``--sys-trace``): every block handed out and given
back, every segment taken from and returned to the driver, and every out-of-memory becomes a
``rocpd_memory_allocate`` row of level 'VIRTUAL' under its own category (TORCH_ALLOCATOR_BLOCK,
_SEGMENT, _OOM), with the Python line that allocated it, beside the runtime's own 'REAL' rows.

PyTorch makes its allocator's per-device state at CUDA's lazy init, and drops a trace hook
attached before then; so once ``torch.cuda`` is imported, the observer is attached and its
``_allocator_init`` is queued with ``torch.cuda._lazy_call`` (run at once when CUDA is up
already): the hook goes in when both the session wants it and CUDA is initialised.
"""

from __future__ import annotations

from .. import _core
from . import autograd_sites, cupti
from .import_hook import AfterImport


def configure(options, settings) -> list[str]:
    settings.torch_memory.enabled = True
    _install("\n".join(cupti.library_prefixes(options.site_filter)))
    return []


def in_child(settings, spec) -> None:
    """A followed Python child: the same hook on its own torch."""
    _install(spec.site_prefixes())


def _install(prefixes: str) -> None:
    # The launch sites' library code (each action's line skips it), as GPU tracing sets it: a
    # run without a GPU backend starts the launch sites for the allocator alone.
    if hasattr(_core, "_cupti_set_callsite_prefixes"):
        _core._cupti_set_callsite_prefixes(prefixes)
    autograd_sites.install()  # backward work: its forward op's line, or backward()'s
    _hook.install()


def _on_torch_cuda(cuda) -> None:
    observer = autograd_sites.attach_observer()
    if observer is not None and hasattr(observer, "_allocator_init"):
        cuda._lazy_call(observer._allocator_init)


_hook = AfterImport("torch.cuda", _on_torch_cuda)
