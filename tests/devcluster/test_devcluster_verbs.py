"""Verbs: get, create, update, patch (merge, JSON), status, delete (lists: test_devcluster_lists.py)."""

from __future__ import annotations

from typing import Any

import aiohttp

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import cluster_path, rb_body, rb_path, status_of

CONDITION = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
             "lastTransitionTime": "2024-01-01T00:00:00Z"}
CONFLICT = status_of(
    409, "Conflict",
    'Operation cannot be fulfilled on resourcebindings.work.karmada.io "rb1": the object has been modified; '
    "please apply your changes to the latest version and try again",
    {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings"})


async def test_get_returns_stored_object(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.get(rb_path("rb1"))
    assert (status, body) == (200, rb1)


async def test_get_of_missing_object_is_404(api: DevCluster) -> None:
    status, body = await api.client.get(rb_path("nope"))
    assert status == 404
    assert body == status_of(404, "NotFound", 'resourcebindings.work.karmada.io "nope" not found',
                             {"name": "nope", "group": "work.karmada.io", "kind": "resourcebindings"})


async def test_create_of_existing_name_is_409_already_exists(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.create(rb_path(), rb_body("rb1"))
    assert status == 409
    assert body == status_of(409, "AlreadyExists", 'resourcebindings.work.karmada.io "rb1" already exists',
                             {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings"})


async def test_create_ignores_status_when_there_is_status_subresource(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["status"] = {"schedulerObservedGeneration": 7}
    status, created = await api.client.create(rb_path(), body)
    assert status == 201
    assert "status" not in created


async def test_put_with_current_version_replaces_object(api: DevCluster, rb1: dict[str, Any]) -> None:
    rb1["spec"]["replicas"] = 5
    status, body = await api.client.put(rb_path("rb1"), rb1)
    assert status == 200
    assert body["spec"]["replicas"] == 5
    assert body["metadata"]["generation"] == 2
    assert int(body["metadata"]["resourceVersion"]) > int(rb1["metadata"]["resourceVersion"])


async def test_put_with_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    rb1["spec"]["replicas"] = 5
    status, body = await api.client.put(rb_path("rb1"), rb1)
    assert (status, body) == (409, CONFLICT)
    assert api.store.get("rb", "rb1", "default")["spec"]["replicas"] == 2


async def test_put_of_missing_object_is_404(api: DevCluster) -> None:
    status, body = await api.client.put(rb_path("ghost"), rb_body("ghost"))
    assert status == 404
    assert body["reason"] == "NotFound"


async def test_merge_patch_merges_maps_replaces_lists(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    await api.client.patch(rb_path("rb1"), {"spec": {"clusters": [{"name": "m1"}, {"name": "m2"}]}})
    status, body = await api.client.patch(rb_path("rb1"), {
        "metadata": {"annotations": {"policy.karmada.io/applied-placement": "{}"}},
        "spec": {"clusters": [{"name": "m3", "replicas": 1}], "replicas": None},
    })
    assert status == 200
    assert body["spec"] == {"resource": rb1["spec"]["resource"], "clusters": [{"name": "m3", "replicas": 1}],
                            "conflictResolution": "Abort"}
    assert body["metadata"]["annotations"] == {"policy.karmada.io/applied-placement": "{}"}


async def test_merge_patch_with_current_version_succeeds(api: DevCluster, rb1: dict[str, Any]) -> None:
    rv = rb1["metadata"]["resourceVersion"]
    status, body = await api.client.patch(rb_path("rb1"), {"metadata": {"resourceVersion": rv},
                                                          "spec": {"replicas": 9}})
    assert (status, body["spec"]["replicas"]) == (200, 9)
    assert body["metadata"]["resourceVersion"] == str(int(rv) + 1)


async def test_merge_patch_with_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    stale = rb1["metadata"]["resourceVersion"]
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    status, body = await api.client.patch(rb_path("rb1"), {"metadata": {"resourceVersion": stale},
                                                          "spec": {"replicas": 9}})
    assert (status, body) == (409, CONFLICT)
    assert api.store.get("rb", "rb1", "default")["spec"]["replicas"] == 2


async def test_status_patch_with_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    stale = rb1["metadata"]["resourceVersion"]
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    status, body = await api.client.patch(rb_path("rb1", sub="status"), {
        "metadata": {"resourceVersion": stale}, "status": {"schedulerObservedGeneration": 1}})
    assert (status, body) == (409, CONFLICT)


async def test_json_patch_applies_operations(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), [
        {"op": "test", "path": "/spec/replicas", "value": 1},
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/spec/clusters", "value": [{"name": "m1"}]},
        {"op": "add", "path": "/spec/clusters/-", "value": {"name": "m2"}},
        {"op": "copy", "from": "/spec/clusters/0", "path": "/spec/clusters/0"},
        {"op": "remove", "path": "/spec/clusters/0"},
        {"op": "add", "path": "/spec/schedulerName", "value": "ours"},
        {"op": "move", "from": "/spec/schedulerName", "path": "/metadata/labels"},
        {"op": "replace", "path": "/metadata/labels", "value": {"a~b/c": "1"}},
    ], kind="json")
    assert status == 200
    assert body["spec"]["replicas"] == 4
    assert body["spec"]["clusters"] == [{"name": "m1"}, {"name": "m2"}]
    assert body["metadata"]["labels"] == {"a~b/c": "1"}


async def test_json_patch_with_failed_test_is_422_and_changes_nothing(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    status, body = await api.client.patch(rb_path("rb1"), [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
    ], kind="json")
    assert status == 422
    assert body == status_of(422, "Invalid", "the server rejected our request due to an error in our request", {})
    assert api.store.get("rb", "rb1", "default") == rb1


async def test_json_patch_replacing_version_is_precondition(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}], kind="json")
    assert (status, body) == (409, CONFLICT)


async def test_body_that_is_not_json_is_400(api: DevCluster, rb1: dict[str, Any]) -> None:
    reply = await api.client.request("PATCH", rb_path("rb1"), b"{nope",
                                     content_type="application/merge-patch+json")
    assert reply.status == 400
    assert reply.body["reason"] == "BadRequest"


async def test_writes_to_main_resource_ignore_status(api: DevCluster, rb1: dict[str, Any]) -> None:
    await api.client.patch(rb_path("rb1", sub="status"), {"status": {"schedulerObservedGeneration": 1}})
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 3},
                                                          "status": {"schedulerObservedGeneration": 99}})
    assert status == 200
    assert body["status"] == {"schedulerObservedGeneration": 1}
    assert body["spec"]["replicas"] == 3


async def test_put_to_main_resource_keeps_stored_status(api: DevCluster, rb1: dict[str, Any]) -> None:
    _, patched = await api.client.patch(rb_path("rb1", sub="status"),
                                        {"status": {"lastScheduledTime": "2024-01-01T00:00:00Z"}})
    patched["status"] = {"lastScheduledTime": "2025-01-01T00:00:00Z"}
    status, body = await api.client.put(rb_path("rb1"), patched)
    assert (status, body["status"]) == (200, {"lastScheduledTime": "2024-01-01T00:00:00Z"})


async def test_writes_to_status_change_only_status(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1", sub="status"), {
        "metadata": {"labels": {"x": "y"}}, "spec": {"replicas": 50},
        "status": {"conditions": [CONDITION]}})
    assert status == 200
    assert body["status"] == {"conditions": [CONDITION]}
    assert body["spec"] == rb1["spec"]
    assert "labels" not in body["metadata"]
    assert body["metadata"]["generation"] == 1


async def test_status_of_cluster_scoped_resource(api: DevCluster) -> None:
    await api.client.create(cluster_path(), {"metadata": {"name": "m1"}, "spec": {"syncMode": "Push"}})
    _, cluster = await api.client.get(cluster_path("m1"))
    status, body = await api.client.put(cluster_path("m1", "status"), {
        "metadata": {"name": "m1", "resourceVersion": cluster["metadata"]["resourceVersion"]},
        "status": {"kubernetesVersion": "v1.30"}})
    assert (status, body["status"]) == (200, {"kubernetesVersion": "v1.30"})
    status, body = await api.client.get(cluster_path("m1", "status"))
    assert (status, body["status"]) == (200, {"kubernetesVersion": "v1.30"})


async def test_delete_without_finalizers_removes_object(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.delete(rb_path("rb1"))
    assert (status, body) == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings",
                    "uid": rb1["metadata"]["uid"]}})
    assert (await api.client.get(rb_path("rb1")))[0] == 404


async def test_delete_with_finalizers_only_sets_deletion_timestamp(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["finalizers"] = ["a/one", "a/two"]
    await api.client.create(rb_path(), body)
    status, deleted = await api.client.delete(rb_path("rb1"))
    assert status == 200
    assert deleted["metadata"]["deletionTimestamp"]
    assert deleted["metadata"]["finalizers"] == ["a/one", "a/two"]
    assert deleted["metadata"]["generation"] == 2
    status, still = await api.client.get(rb_path("rb1"))
    assert (status, still) == (200, deleted)


async def test_object_goes_when_last_finalizer_goes(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["finalizers"] = ["a/one", "a/two"]
    await api.client.create(rb_path(), body)
    await api.client.delete(rb_path("rb1"))
    status, _ = await api.client.patch(rb_path("rb1"), {"metadata": {"finalizers": ["a/two"]}})
    assert status == 200
    assert (await api.client.get(rb_path("rb1")))[0] == 200
    status, _ = await api.client.patch(rb_path("rb1"), {"metadata": {"finalizers": []}})
    assert status == 200
    assert (await api.client.get(rb_path("rb1")))[0] == 404


async def test_no_new_finalizers_on_deleting_object(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["finalizers"] = ["a/one"]
    await api.client.create(rb_path(), body)
    await api.client.delete(rb_path("rb1"))
    status, reply = await api.client.patch(rb_path("rb1"), {"metadata": {"finalizers": ["a/one", "a/new"]}})
    assert status == 422
    assert reply["details"]["causes"][0]["field"] == "metadata.finalizers"


async def test_delete_with_stale_resource_version_precondition_is_409(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    status, body = await api.client.delete(rb_path("rb1"), {"preconditions": {"resourceVersion": "1"}})
    assert status == 409
    assert body["reason"] == "Conflict"
    assert (await api.client.get(rb_path("rb1")))[0] == 200


async def test_delete_of_missing_object_is_404(api: DevCluster) -> None:
    status, body = await api.client.delete(rb_path("ghost"))
    assert status == 404
    assert body["details"] == {"name": "ghost", "group": "work.karmada.io", "kind": "resourcebindings"}


async def test_leases_support_optimistic_concurrency(api: DevCluster) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    status, lease = await api.client.create(path, {"metadata": {"name": "binding-scheduler"},
                                                   "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}})
    assert status == 201
    lease["spec"]["holderIdentity"] = "b"
    assert (await api.client.put(f"{path}/binding-scheduler", lease))[0] == 200
    lease["spec"]["holderIdentity"] = "c"
    status, body = await api.client.put(f"{path}/binding-scheduler", lease)
    assert (status, body["reason"]) == (409, "Conflict")


async def test_body_nested_too_deeply_is_bad_request_not_crash(api: DevCluster) -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    async with aiohttp.ClientSession() as session, session.post(
        api.url + "/api/v1/namespaces", data=deep, headers={"Content-Type": "application/json"}
    ) as response:
        answer = await response.json()
    assert (response.status, answer["reason"]) == (400, "BadRequest")
    assert "nested too deeply" in answer["message"]
