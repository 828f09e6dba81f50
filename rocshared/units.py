"""Rates and sizes with SI prefixes, as `rocprof peaks` and `rocpd sol` print them."""

from __future__ import annotations

import math

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(v: float, unit: str) -> str:
    """7.09e14, 'FLOP/s' -> '709.4 TFLOP/s'; percentages as '61.9 %'; NaN or None as '-'."""
    if v is None or isinstance(v, float) and math.isnan(v):
        return "-"
    if unit == "%":
        return f"{v:.1f} %"
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{v / scale:.1f} {prefix}{unit}"
    return f"{v:.3g} {unit}"
