"""Regression guard for B7 (start-up): what `rocprof run` adds to a Python program, and to each
Python child process it follows, against plain `python` in the same run.

The goals (+50 ms wall for the launcher, +20 ms per followed child) are benchmarks/b7_startup.py's,
measured there with quartiles. Here the runs alternate (that benchmark's measure()) and the guard
reads the CPU time of each process tree, the fastest of a few runs per kind: on a shared CI box
wall time grows with whatever else runs, CPU time hardly does, and a run that lost the CPU is
only ever slower. The limits are generous, and still a start-up that doubles fails (importing
the analysis modules and every capture library before the program ran did).
"""

from __future__ import annotations

import sys

import pytest
from support import ROOT

# Timed: `make test` runs these alone, after the parallel pass (pyproject.toml, `timing`).
pytestmark = pytest.mark.timing

ROUNDS = 7
# Added CPU ms, fastest runs. Measured on the CPU box (2 shared cores, Python 3.11, load ~10):
# launcher +39..41 ms, each followed child +11..15 ms. Before children started from the
# launcher's configuration (each one configured and probed the backends, imported dataclasses,
# json, re and the sqlite3 module, and wrote its schema with DDL), +55..61 / +46..52 ms; with
# the analysis modules and every backend's probe loaded before the program, +88..95 / +70..74.
# On 2026-11-29 the same box ran everything about twice as slowly: launcher +25..34, each child
# +25..32 (main before that day's changes measured the same in the same rounds). The limits
# hold such a day and still fail the +70..74 per child of a doubled start-up.
# On 2026-12-03 (load 8, three runs of this statistic against 706c8b4 in the same rounds): each
# followed child +10..17 (706c8b4: +24..35, which the +25..32 above was too: a child imported
# signal, enum and threading at its exit), the launcher +25..29 (+23..30). The limits keep twice
# those figures: a day that doubles everything still passes; 706c8b4 failed it in 1 of 3 runs
# (a child +37). What a child loads at its start and exit is held exactly by
# tests/integration/test_startup_imports.py.
MAX_LAUNCHER_MS = 60
MAX_CHILD_MS = 35


def test_rocprof_run_adds_little_to_start_up_and_to_each_followed_child(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import b7_startup as b7

    _wall, cpu = b7.measure(ROUNDS, str(tmp_path), python=sys.executable)
    best = {kind: min(values) for kind, values in cpu.items()}
    launcher = best["rocprof"] - best["plain"]
    child = ((best["rocprof parent"] - best["plain parent"]) - launcher) / b7.CHILDREN
    assert launcher <= MAX_LAUNCHER_MS and child <= MAX_CHILD_MS, (
        f"regression guard B7: `rocprof run hello.py` adds {launcher:.0f} ms of CPU to `python "
        f"hello.py` (limit {MAX_LAUNCHER_MS}), each followed child {child:.0f} ms (limit "
        f"{MAX_CHILD_MS}); fastest of {ROUNDS} alternated runs, CPU ms: "
        + ", ".join(f"{k} {v:.0f}" for k, v in best.items())
        + "; `python -X importtime -m rocprof run hello.py` shows what loads before the program")
