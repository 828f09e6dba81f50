"""Fixtures of the integration tests."""

from __future__ import annotations

import pytest
from wheel_build import build_wheel


@pytest.fixture(scope="session")
def wheel():
    return build_wheel()
