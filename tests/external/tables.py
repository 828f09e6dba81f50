"""Comparing CSV tables cell by cell (the external-client suite's judge)."""

from __future__ import annotations

import csv
import math


def read_csv(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def cell(v):
    """A CSV cell as a value: numbers as numbers (1, 1.0, 1.000000 and 1e+00 are equal), an empty
    cell as None, text as text."""
    if v == "":
        return None
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
    except ValueError:
        return v
    return None if math.isnan(f) else f


def same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def assert_same_table(ours, theirs, what: str = "") -> None:
    """Headers equal; rows equal cell by cell, each table's rows in its own order first and, where
    records tie on their sort keys, as sorted multisets."""
    (h1, r1), (h2, r2) = ours, theirs
    assert h1 == h2, f"{what}: headers differ\n ours: {h1}\n ROCm: {h2}"
    assert len(r1) == len(r2), f"{what}: {len(r1)} rows, ROCm's {len(r2)}"
    a = sorted(([cell(c) for c in r] for r in r1), key=repr)
    b = sorted(([cell(c) for c in r] for r in r2), key=repr)
    for x, y in zip(a, b, strict=True):
        bad = [(h1[i], u, v) for i, (u, v) in enumerate(zip(x, y, strict=True)) if not same(u, v)]
        assert not bad, f"{what}: cells differ (column, ours, ROCm's): {bad}\n ours: {x}\n ROCm: {y}"
