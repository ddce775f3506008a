"""Every conformance test runs twice: against devcluster and against a real kube-apiserver (the session's
`control_plane`; that half is skipped where Go is missing). Each test gets its own namespace on a server
shared by the module: devcluster is started once per module, the real control plane once per session.
Namespaces are left behind: without a kube-controller-manager a deleted namespace would stay Terminating.

A behaviour devcluster knowingly does not share is marked `@pytest.mark.devcluster_differs("why")`: its
devcluster half is then a strict xfail. Every such mark must be listed in docs/devcluster.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.conformance.helpers import Server
from testsupport.realcluster.kube import KubeClient

SERVERS = ["devcluster", "real"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("devcluster_differs")
        callspec = getattr(item, "callspec", None)
        if marker is not None and callspec is not None and callspec.params.get("server") == "devcluster":
            item.add_marker(pytest.mark.xfail(strict=True, reason=str(marker.args[0])))


@pytest.fixture(scope="module")
def devcluster() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as api:
        yield api


def _server(request: pytest.FixtureRequest, name: str) -> Server:
    if name == "real":
        plane = request.getfixturevalue("control_plane")
        client = KubeClient.from_kubeconfig(plane.kubeconfig_path)
    else:
        api: DevCluster = request.getfixturevalue("devcluster")
        client = KubeClient.from_kubeconfig(api.kubeconfig_path)
    namespace = f"conformance-{uuid.uuid4().hex[:8]}"
    status, body = client.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    assert status == 201, f"creating namespace {namespace}: {status} {body}"
    return Server(name, client, namespace)


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest) -> Server:
    return _server(request, request.param)


@pytest.fixture
def both(request: pytest.FixtureRequest) -> tuple[Server, Server]:
    """devcluster and the real server side by side, for answers that can only be compared with each other (the
    OpenAPI documents); skipped with the real half where Go is missing."""
    return _server(request, "devcluster"), _server(request, "real")
