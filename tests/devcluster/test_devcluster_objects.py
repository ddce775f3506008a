"""Object semantics: uid, creationTimestamp, resourceVersion, generation, generateName, namespaces."""

from __future__ import annotations

import re
from typing import Any

import yaml

from binding_scheduler.devcluster import PACKAGE_CRDS, DevCluster
from tests.devcluster.helpers import cluster_path, rb_body, rb_path, status_of


async def test_create_sets_uid_timestamp_and_versions(api: DevCluster) -> None:
    before = api.store.resource_version
    status, body = await api.client.create(rb_path(), rb_body("rb1"))
    assert status == 201
    meta = body["metadata"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", meta["uid"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == str(before + 1)
    assert (body["apiVersion"], body["kind"], meta["namespace"]) == (
        "work.karmada.io/v1alpha2", "ResourceBinding", "default")


async def test_resource_version_is_global_and_increasing(api: DevCluster) -> None:
    versions = []
    for call in (
        api.client.create(rb_path(), rb_body("a")),
        api.client.create(cluster_path(), {"metadata": {"name": "c1"}, "spec": {"syncMode": "Push"}}),
        api.client.patch(rb_path("a"), {"spec": {"replicas": 3}}),
        api.client.patch(cluster_path("c1", "status"), {"status": {"kubernetesVersion": "v1.30"}}),
        api.client.patch(rb_path("a"), {"metadata": {"labels": {"x": "y"}}}),
    ):
        status, body = await call
        assert status in (200, 201)
        versions.append(int(body["metadata"]["resourceVersion"]))
    assert versions == list(range(versions[0], versions[0] + 5))


async def test_generation_is_bumped_by_spec_change(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    assert status == 200
    assert body["metadata"]["generation"] == 2


async def test_generation_is_not_bumped_by_metadata_change(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), {"metadata": {"labels": {"a": "b"}}})
    assert status == 200
    assert body["metadata"]["generation"] == 1
    assert body["metadata"]["labels"] == {"a": "b"}


async def test_generation_is_not_bumped_by_status_change(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1", sub="status"),
                                          {"status": {"lastScheduledTime": "2024-01-01T00:00:00Z"}})
    assert status == 200
    assert body["metadata"]["generation"] == 1


async def test_without_status_subresource_changes_bump_generation(
    api: DevCluster,
) -> None:
    crd = yaml.safe_load((PACKAGE_CRDS / "cluster.karmada.io_clusters.yaml").read_text())
    crd["metadata"] = {"name": "gadgets.example.com"}
    crd["spec"].update(group="example.com", names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
    del crd["spec"]["versions"][0]["subresources"]
    assert (await api.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd))[0] == 201
    path = "/apis/example.com/v1alpha1/gadgets"
    status, body = await api.client.create(path, {"metadata": {"name": "g1"}, "spec": {"syncMode": "Push"}})
    assert (status, body["metadata"]["generation"]) == (201, 1)
    status, body = await api.client.patch(f"{path}/g1", {"status": {"kubernetesVersion": "v1.30"}})
    assert (status, body["metadata"]["generation"], body["status"]) == (200, 2, {"kubernetesVersion": "v1.30"})


async def test_built_in_kinds_keep_no_generation(api: DevCluster) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    status, body = await api.client.create(path, {"metadata": {"name": "l1"}, "spec": {"holderIdentity": "a"}})
    assert (status, "generation" in body["metadata"]) == (201, False)
    status, body = await api.client.patch(f"{path}/l1", {"spec": {"holderIdentity": "b"}})
    assert (status, "generation" in body["metadata"]) == (200, False)


async def test_no_op_patch_keeps_resource_version(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 1}})
    assert status == 200
    assert body["metadata"]["resourceVersion"] == rb1["metadata"]["resourceVersion"]


async def test_generate_name_makes_unique_name_with_prefix(api: DevCluster) -> None:
    names = set()
    for _ in range(3):
        body = rb_body(None)
        body["metadata"]["generateName"] = "rb-"
        status, created = await api.client.create(rb_path(), body)
        assert status == 201
        assert re.fullmatch(r"rb-[bcdfghjklmnpqrstvwxz2456789]{5}", created["metadata"]["name"])
        assert created["metadata"]["generateName"] == "rb-"
        names.add(created["metadata"]["name"])
    assert len(names) == 3


async def test_events_with_generate_name_never_collide(api: DevCluster) -> None:
    path = "/api/v1/namespaces/default/events"
    event = {"metadata": {"generateName": "rb1."}, "reason": "Scheduled", "message": "ok",
             "involvedObject": {"kind": "ResourceBinding", "name": "rb1", "namespace": "default"}}
    statuses = [(await api.client.create(path, event))[0] for _ in range(5)]
    assert statuses == [201] * 5
    assert len(api.store.list("events", "default")) == 5


async def test_create_without_name_or_generate_name_is_422(api: DevCluster) -> None:
    status, body = await api.client.create(rb_path(), rb_body(None))
    assert status == 422
    assert body == status_of(422, "Invalid", 'ResourceBinding.work.karmada.io "" is invalid: metadata.name: '
                             "Required value: name or generateName is required", {
                                 "group": "work.karmada.io", "kind": "ResourceBinding",
                                 "causes": [{"reason": "FieldValueRequired",
                                             "message": "Required value: name or generateName is required",
                                             "field": "metadata.name"}]})


async def test_create_in_missing_namespace_is_404(api: DevCluster) -> None:
    status, body = await api.client.create(rb_path(namespace="nowhere"), rb_body("rb1"))
    assert status == 404
    assert body == status_of(404, "NotFound", 'namespaces "nowhere" not found',
                             {"name": "nowhere", "kind": "namespaces"})


async def test_terminating_namespace_rejects_creates(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "ns1"}})
    held = rb_body("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert (await api.client.create(rb_path(namespace="ns1"), held))[0] == 201
    status, namespace = await api.client.delete("/api/v1/namespaces/ns1")
    assert status == 200
    assert namespace["status"]["phase"] == "Terminating"
    status, body = await api.client.create(rb_path(namespace="ns1"), rb_body("rb2"))
    assert status == 403
    assert body == status_of(
        403, "Forbidden",
        'resourcebindings.work.karmada.io "rb2" is forbidden: unable to create new content in namespace ns1 '
        "because it is being terminated",
        {"name": "rb2", "group": "work.karmada.io", "kind": "resourcebindings",
         "causes": [{"reason": "NamespaceTerminating", "message": "namespace ns1 is being terminated",
                     "field": "metadata.namespace"}]})


async def test_terminating_namespace_goes_away_when_last_object_does(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "ns1"}})
    held = rb_body("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.client.create(rb_path(namespace="ns1"), held)
    await api.client.delete("/api/v1/namespaces/ns1")
    status, _ = await api.client.patch(rb_path("held", "ns1"), {"metadata": {"finalizers": None}})
    assert status == 200
    assert (await api.client.get("/api/v1/namespaces/ns1"))[0] == 404


async def test_default_and_kube_system_namespaces_exist(api: DevCluster) -> None:
    status, body = await api.client.list("/api/v1/namespaces")
    assert status == 200
    assert [n["metadata"]["name"] for n in body["items"]] == ["default", "kube-system"]
    assert body["items"][0]["status"] == {"phase": "Active"}


async def test_deleting_empty_namespace_removes_it(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "ns1"}})
    status, body = await api.client.delete("/api/v1/namespaces/ns1")
    assert (status, body["kind"], body["status"]) == (200, "Namespace", {"phase": "Terminating"})
    assert (await api.client.get("/api/v1/namespaces/ns1"))[0] == 404
