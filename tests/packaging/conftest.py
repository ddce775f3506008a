"""The packaging tier: the built wheel, installed in a fresh venv, works without the source tree."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "packaging: builds the wheels and runs them from a fresh venv (about 30 s; needs PyPI)")
