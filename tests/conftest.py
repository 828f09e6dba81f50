"""Fixtures for every test folder; helpers live in support.py (import support)."""

from __future__ import annotations

import pytest
from support import ROOT, WORKLOADS, _env, open_db, popen_rocprof, run_rocprof  # noqa: F401 - re-exported


@pytest.fixture
def workload():
    return lambda name: WORKLOADS / name
