"""Discovery: /version, /api, /api/v1, /apis, /apis/GROUP, /apis/GROUP/VERSION.

Every test here only reads, so the module shares one server (the one module-scoped devcluster: a server starts in
about 6 ms, so the tests that write keep a fresh one each, for isolation rather than speed)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from binding_scheduler.devcluster import DevCluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api() -> AsyncIterator[DevCluster]:
    async with DevCluster() as cluster:
        yield cluster


async def test_version_reports_kubernetes_version(api: DevCluster) -> None:
    status, body = await api.client.get("/version")
    assert status == 200
    assert (body["major"], body["minor"], body["gitVersion"]) == ("1", "35", "v1.35.4+devcluster")


async def test_api_lists_core_version(api: DevCluster) -> None:
    status, body = await api.client.get("/api")
    assert status == 200
    assert body["kind"] == "APIVersions"
    assert body["versions"] == ["v1"]


async def test_core_v1_lists_namespaces_events_and_services(api: DevCluster) -> None:
    status, body = await api.client.get("/api/v1")
    assert status == 200
    by_name = {r["name"]: r for r in body["resources"]}
    assert sorted(by_name) == ["events", "namespaces", "namespaces/status", "services", "services/status"]
    assert by_name["namespaces"]["namespaced"] is False
    assert by_name["namespaces"]["kind"] == "Namespace"
    assert by_name["events"]["namespaced"] is True
    assert by_name["events"]["verbs"] == [
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    assert by_name["services/status"]["verbs"] == ["get", "patch", "update"]


async def test_apis_lists_every_group_with_preferred_version(api: DevCluster) -> None:
    status, body = await api.client.get("/apis")
    assert status == 200
    assert body["kind"] == "APIGroupList"
    groups = {g["name"]: g["preferredVersion"]["groupVersion"] for g in body["groups"]}
    assert groups.items() >= {
        "coordination.k8s.io": "coordination.k8s.io/v1",
        "apiextensions.k8s.io": "apiextensions.k8s.io/v1",
        "cluster.karmada.io": "cluster.karmada.io/v1alpha1",
        "work.karmada.io": "work.karmada.io/v1alpha2",
    }.items()  # plus the project's own CRDs


async def test_group_document_names_versions(api: DevCluster) -> None:
    status, body = await api.client.get("/apis/work.karmada.io")
    assert status == 200
    assert body == {
        "kind": "APIGroup", "apiVersion": "v1", "name": "work.karmada.io",
        "versions": [{"groupVersion": "work.karmada.io/v1alpha2", "version": "v1alpha2"}],
        "preferredVersion": {"groupVersion": "work.karmada.io/v1alpha2", "version": "v1alpha2"},
    }


async def test_group_version_lists_its_resources(api: DevCluster) -> None:
    status, body = await api.client.get("/apis/work.karmada.io/v1alpha2")
    assert status == 200
    by_name = {r["name"]: r for r in body["resources"]}
    assert by_name["resourcebindings"]["kind"] == "ResourceBinding"
    assert by_name["resourcebindings"]["namespaced"] is True
    assert by_name["resourcebindings"]["shortNames"] == ["rb"]
    assert by_name["clusterresourcebindings"]["namespaced"] is False
    assert by_name["clusterresourcebindings"]["shortNames"] == ["crb"]
    assert "resourcebindings/status" in by_name
    assert "clusterresourcebindings/status" in by_name


async def test_clusters_are_cluster_scoped_with_status_subresource(api: DevCluster) -> None:
    status, body = await api.client.get("/apis/cluster.karmada.io/v1alpha1")
    assert status == 200
    by_name = {r["name"]: r for r in body["resources"]}
    assert (by_name["clusters"]["kind"], by_name["clusters"]["namespaced"]) == ("Cluster", False)
    assert "clusters/status" in by_name


async def test_leases_are_served_in_coordination_v1(api: DevCluster) -> None:
    status, body = await api.client.get("/apis/coordination.k8s.io/v1")
    assert status == 200
    assert [(r["name"], r["kind"], r["namespaced"]) for r in body["resources"]] == [
        ("leases", "Lease", True)]


async def test_unknown_group_and_resource_are_404(api: DevCluster) -> None:
    """As kube-apiserver: groups it does not serve fall through to the Go mux's plain 404; `/api` answers one."""
    assert await api.client.get("/apis/nothing.example.com/v1/things") == (404, "404 page not found\n")
    status, body = await api.client.get("/api/v1/things")
    assert status == 404
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "the server could not find the requested resource", "reason": "NotFound",
                    "code": 404, "details": {}}


async def test_loaded_crds_are_listed_as_customresourcedefinitions(api: DevCluster) -> None:
    status, body = await api.client.list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    assert status == 200
    names = [i["metadata"]["name"] for i in body["items"]]
    assert names == sorted(names)
    assert {"clusterresourcebindings.work.karmada.io", "clusters.cluster.karmada.io",
            "resourcebindings.work.karmada.io"} <= set(names)
