"""Joules per step, per ROCTx range, per launch line and per kernel, from the GPUs' energy
counter or power samples (``rocprof run --energy``).

    df = rocpd.energy(db)                        # per step (the given or detected ROCTx step)
    df = rocpd.energy(db, by="range")            # per ROCTx range name
    df = rocpd.energy(db, by="kernel")           # per kernel, and the GPU's idle as "idle"
    df = rocpd.energy(db, by="line", units_per_step=4096)   # J per token at 4096 tokens/step

Columns: process, rank, pid, the row's key (step and name, range, line or kernel), Count
(instances), Joules, Seconds (their time; work that overlaps counts each), Watts (Joules /
Seconds), SharePercent (of the process's energy over its GPUs' run), PlusMinusJoules (the
counter's resolution, below) and, with ``units_per_step``, JoulesPerUnit (a step's joules per
unit; other rows: their joules per unit of all the steps).

How (rocpd.energy.meter, rocpd.energy.share): energy of an interval [t0, t1] is E(t1) - E(t0)
per GPU, E drawn linearly through the counter's change points (readings that repeat a value
were stale), or the trapezoid integral of power where no counter was read. Kernels and lines
share each counter period's energy: the period's idle time is "idle", the rest goes to the work
running in it in proportion to each one's time in it. ±: per instance, one counter period's
energy at the instance's mean power at each of its two ends, capped at its energy; instances add
in quadrature. The table's ``attrs`` carry the step range, the meters and these rules.

A database without energy or power samples raises RocpdError with one line saying how to
record them. ``rocpd energy DB... --by ...`` prints the table; ``rocpd report`` shows energy per
step and range and the idle share; ``rocpd diff`` compares energy per step.
"""

from __future__ import annotations

import sys
import types

from ..io.connection import Connection
from . import meter, share, tables
from .meter import MISSING
from .tables import BY

__all__ = ["energy", "has_energy", "BY", "MISSING", "meter", "share", "tables"]


def energy(db, by: str = "step", step: str | None = None, units_per_step: float | None = None,
           **filters):
    """The joules of each step, ROCTx range, line or kernel (``by``) of ``db`` (a Connection or
    a path) as a DataFrame (see the package's text). ``step``: the ROCTx step range (None:
    detected; "": the whole run is one step). ``units_per_step``: tokens or samples per step,
    for JoulesPerUnit. ``filters``: as every rocpd table takes them (rank, pid, time window)."""
    db, opened = _open(db)
    try:
        return tables.energy_table(db, by, step, units_per_step, **filters)
    finally:
        if opened:
            db.close()


def has_energy(db, **filters) -> bool:
    """Whether ``db`` holds energy counter or power samples of a GPU."""
    return bool(meter.read(db, **filters))


def _open(x):
    if hasattr(x, "parts"):
        return x, False
    return Connection(*(x if isinstance(x, (list, tuple)) else [x])), True


class _CallableModule(types.ModuleType):
    """``rocpd.energy`` is this package and, called, :func:`energy`: ``rocpd.energy(db)`` as the
    API reads, while ``rocpd.energy.meter`` and the other modules stay importable."""

    def __call__(self, *args, **kwargs):
        return energy(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
