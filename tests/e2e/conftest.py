"""The e2e tier: the real operator against the real control plane (kube-apiserver + etcd), as the scheduler's
least-privileged ServiceAccount, with the API server's audit log as the journal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.harness import Journal, Objects, unique
from testsupport.realcluster.controlplane import ControlPlane
from testsupport.realcluster.kube import KubeClient


@pytest.fixture
def kube(control_plane: ControlPlane) -> KubeClient:
    """The admin's client (group system:masters): the test acting as a user or another controller."""
    return control_plane.admin()


@pytest.fixture
def objects(kube: KubeClient) -> Iterator[Objects]:
    made = Objects(kube)
    yield made
    made.cleanup()


@pytest.fixture
def journal(control_plane: ControlPlane) -> Journal:
    return Journal(control_plane)


@pytest.fixture
def scheduler_name() -> str:
    """This test's scheduler name and Lease name: tests share the control plane, never each other's bindings."""
    return unique("e2e")


@pytest.fixture(autouse=True)
def never_forbidden(control_plane: ControlPlane) -> Iterator[None]:
    """Every e2e test fails if the scheduler was refused anything: its rules must cover what it does."""
    watched = Journal(control_plane)
    yield
    refused = [str(e) for e in watched.operator() if e.code == 403]
    assert refused == [], f"the scheduler's ServiceAccount was refused: {refused}"
