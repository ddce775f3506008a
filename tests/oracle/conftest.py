"""The oracle tier: Karmada's own scheduler (tools/karmada-oracle) beside ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.oracle.oracle import OracleError, binary
from testsupport.realcluster.controlplane import go_available


@pytest.fixture(scope="session")
def karmada_oracle() -> Path:
    """karmada-oracle built against Karmada's Go module (cached); skipped (one line) where Go is missing."""
    if not go_available():
        pytest.skip("karmada-oracle: Go is not installed, so Karmada's scheduler cannot be built from its module")
    try:
        return binary()
    except OracleError as error:
        pytest.fail(f"karmada-oracle could not be built: {error}", pytrace=False)
