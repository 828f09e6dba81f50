"""The findings rules (see ../findings.py for what a finding is and how they are ranked). Each
rule is a function ``rule(analysis) -> list[Finding]`` that reads an
:class:`~rocpd.analysis.Analysis` and returns the findings its pattern shows, with the numbers as
evidence and what to do about it.

A rule is one module of this package (or joins one): the module names its thresholds at its top
and lists its rules in ``RULES``. Every module here is found when the package loads, so a new
rule is one new file and nothing else. Findings rank by level (caveats, issues, information),
then by score; among equal ones, by module name, then by their order in ``RULES``.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..findings import Finding


def discover() -> list:
    """Every rule of every module of this package, in module-name order."""
    found = []
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        found += importlib.import_module(f"{__name__}.{m.name}").RULES
    return found


RULES = discover()
LEVELS = {"caveat": 0, "issue": 1, "info": 2}


def evaluate(a) -> list[Finding]:
    found = [f for rule in RULES for f in rule(a)]
    return sorted(found, key=lambda f: (LEVELS[f.level], -f.score))
