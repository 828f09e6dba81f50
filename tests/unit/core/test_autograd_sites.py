"""Backward kernels get the line of their backward() call: the calling thread lends its Python
frames to launches made on threads without Python frames (autograd's device threads) while the
backward call runs (rocprof.capture.autograd_sites). Checked through the real capture path:
_core._launch_site_from_native_thread() is what a launch on such a thread gets."""

import pytest
from rocprof import _core

torch = pytest.importorskip("torch")



def test_a_native_thread_gets_the_lent_site_only_while_lent(launch_sites_started):
    assert _core._launch_site_from_native_thread() == 0
    previous = _core._launch_site_lend()
    try:
        lent = _core._launch_site_from_native_thread()
        assert lent != 0 and previous == 0
    finally:
        _core._launch_site_restore(previous)
    assert _core._launch_site_from_native_thread() == 0


def test_backward_lends_its_call_site(launch_sites_started):
    from rocprof.capture import autograd_sites

    autograd_sites.install()  # torch is imported: patched now
    assert getattr(torch.autograd.backward, autograd_sites._MARK)
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            # What a kernel launched here, on a thread without Python frames, would carry.
            seen.append(_core._launch_site_from_native_thread())
            return g * 2

    x = torch.ones(3, requires_grad=True)
    before = _core._launch_site_borrowed_uses()
    Probe.apply(x).sum().backward()  # LINE_BACKWARD
    torch.autograd.grad(Probe.apply(x).sum(), x)
    assert len(seen) == 2 and all(k != 0 for k in seen)
    assert _core._launch_site_borrowed_uses() >= before + 2
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert _core._launch_site_from_native_thread() == 0  # restored after the call
    autograd_sites.install()  # twice: wrapped once
    assert not getattr(torch.autograd.backward.__wrapped__, autograd_sites._MARK, False)
