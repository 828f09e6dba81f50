"""ROCm's ``roctx.context_decorators``: RoctxRange and RoctxProfiler, each both a context manager
and a decorator, with ROCm's signatures.

    from roctx.context_decorators import RoctxRange, RoctxProfiler
    with RoctxRange("forward"):          # push/pop a range (a no-op when msg is None)
        ...
    @RoctxProfiler()                      # resume recording for the call, pause after it
    def hot(): ...

Unlike ROCm's, ``__exit__`` prints nothing: an exception propagates with its own traceback.
"""

from __future__ import annotations

import functools

from rocprof import _core

__all__ = ["RoctxRange", "RoctxProfiler"]


class RoctxRange:
    """A ROCTx push/pop range named ``msg`` around a block or each call of a function."""

    def __init__(self, msg=None):
        self.msg = msg

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _core.push(self.msg)
            try:
                return func(*args, **kwargs)
            finally:
                _core.pop()

        return wrapper

    def __enter__(self):
        # ROCm returns the push depth, or the manager itself when there is no message.
        if self.msg is None:
            return self
        self.a = _core.push(self.msg)
        return self.a

    def __exit__(self, exc_type, exc_value, tb):
        if self.msg is not None:
            _core.pop()
        return False


class RoctxProfiler:
    """Records only inside the block or call: resume(tid) on entry, pause(tid) on exit."""

    def __init__(self, tid=0):
        self.tid = tid

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _core.resume(self.tid)
            try:
                return func(*args, **kwargs)
            finally:
                _core.pause(self.tid)

        return wrapper

    def __enter__(self):
        self.a = _core.resume(self.tid)
        return self.a

    def __exit__(self, exc_type, exc_value, tb):
        _core.pause(self.tid)
        return False
