"""Fixtures shared by every tier: the real control plane (started once per session, only when a test asks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realcluster.controlplane import ControlPlane, ControlPlaneError, go_available, start, stop


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """kube-apiserver + etcd on loopback, RBAC on, audit log on; skipped (one line) where Go is missing."""
    if not go_available():
        pytest.skip("real control plane: Go is not installed, so kube-apiserver and etcd cannot be built")
    state = tmp_path_factory.mktemp("controlplane") / "state"
    try:
        plane = start(state, tie_to_parent=True)
    except ControlPlaneError as error:
        pytest.fail(f"the real control plane did not start: {error}", pytrace=False)
    try:
        yield plane
    finally:
        stop(state)


@pytest.fixture(scope="session")
def helm() -> Path:
    """helm built from helm.sh/helm/v3 (cached); skipped (one line) where Go is missing."""
    from tests.chart.helm import HelmError, binary

    if not go_available():
        pytest.skip("helm: Go is not installed, so helm cannot be built from its module")
    try:
        return binary()
    except HelmError as error:
        pytest.fail(f"helm could not be built: {error}", pytrace=False)
