"""Fixtures for every test folder; helpers live in support.py (import support)."""

from __future__ import annotations

import pytest
from support import ROOT, WORKLOADS, _env, open_db, popen_rocprof, run_rocprof  # noqa: F401 - re-exported


@pytest.fixture
def workload():
    return lambda name: WORKLOADS / name


@pytest.fixture()
def launch_sites_started():
    """Launch-site capture running without a session, with the library prefixes a session uses
    (tests of capture/python/launch_sites through rocprof._core's test hooks)."""
    from rocprof import _core
    from rocprof.capture import cupti

    _core._cupti_set_callsite_prefixes("\n".join(cupti.library_prefixes()))
    _core._launch_sites_start()
    yield
    _core._launch_sites_stop()
