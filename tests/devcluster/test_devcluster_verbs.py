"""Verbs: get, list with selectors, create, update, patch (merge/JSON/strategic), status, delete."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import cluster_path, rb_body, rb_path, status_of

CONDITION = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
             "lastTransitionTime": "2024-01-01T00:00:00Z"}
CONFLICT = status_of(
    409, "Conflict",
    'Operation cannot be fulfilled on resourcebindings.work.karmada.io "rb1": the object has been modified; '
    "please apply your changes to the latest version and try again",
    {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings"})


async def _labelled(api: DevCluster) -> None:
    for name, labels in [("a", {"env": "prod", "tier": "1"}), ("b", {"env": "dev", "tier": "3"}),
                         ("c", {"team": "x"})]:
        body = rb_body(name)
        body["metadata"]["labels"] = labels
        assert (await api.client.create(rb_path(), body))[0] == 201


async def test_get_returns_the_stored_object(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.get(rb_path("rb1"))
    assert (status, body) == (200, rb1)


async def test_get_of_a_missing_object_is_404(api: DevCluster) -> None:
    status, body = await api.client.get(rb_path("nope"))
    assert status == 404
    assert body == status_of(404, "NotFound", 'resourcebindings.work.karmada.io "nope" not found',
                             {"name": "nope", "group": "work.karmada.io", "kind": "resourcebindings"})


async def test_list_carries_the_current_resource_version_and_kind(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.list(rb_path())
    assert status == 200
    assert body == {"kind": "ResourceBindingList", "apiVersion": "work.karmada.io/v1alpha2",
                    "metadata": {"resourceVersion": str(api.store.resource_version), "continue": ""},
                    "items": [rb1]}


async def test_list_across_namespaces(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await api.client.create(rb_path(), rb_body("x"))
    await api.client.create(rb_path(namespace="other"), rb_body("y"))
    status, body = await api.client.list(rb_path(namespace=None))
    assert status == 200
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]] == [
        ("default", "x"), ("other", "y")]


@pytest.mark.parametrize(("selector", "names"), [
    ("env=prod", ["a"]),
    ("env==prod", ["a"]),
    ("env!=prod", ["b", "c"]),
    ("env in (prod,dev)", ["a", "b"]),
    ("env notin (prod)", ["b", "c"]),
    ("team", ["c"]),
    ("!team", ["a", "b"]),
    ("tier>2", ["b"]),
    ("tier<2", ["a"]),
    ("env,tier!=3", ["a"]),
])
async def test_list_by_label_selector(api: DevCluster, selector: str, names: list[str]) -> None:
    await _labelled(api)
    status, body = await api.client.list(rb_path(), labelSelector=selector)
    assert status == 200
    assert [i["metadata"]["name"] for i in body["items"]] == names


async def test_a_malformed_label_selector_is_400(api: DevCluster) -> None:
    status, body = await api.client.list(rb_path(), labelSelector="env in prod")
    assert status == 400
    assert body == status_of(400, "BadRequest", "unable to parse requirement: 'env in prod'")


async def test_list_by_field_selector_on_name(api: DevCluster) -> None:
    await _labelled(api)
    status, body = await api.client.list(rb_path(), fieldSelector="metadata.name=b")
    assert (status, [i["metadata"]["name"] for i in body["items"]]) == (200, ["b"])
    status, body = await api.client.list(rb_path(), fieldSelector="metadata.name!=b")
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "c"]


async def test_list_by_field_selector_on_namespace(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await api.client.create(rb_path(), rb_body("x"))
    await api.client.create(rb_path(namespace="other"), rb_body("y"))
    status, body = await api.client.list(rb_path(namespace=None), fieldSelector="metadata.namespace=other")
    assert (status, [i["metadata"]["name"] for i in body["items"]]) == (200, ["y"])


async def test_a_field_selector_on_another_field_is_400(api: DevCluster) -> None:
    status, body = await api.client.list(rb_path(), fieldSelector="spec.schedulerName=x")
    assert status == 400
    assert body == status_of(400, "BadRequest", "field label not supported: spec.schedulerName")


async def test_list_pages_with_limit_and_continue(api: DevCluster) -> None:
    await _labelled(api)
    status, first = await api.client.list(rb_path(), limit="2")
    assert status == 200
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    status, second = await api.client.list(rb_path(), limit="2", **{"continue": first["metadata"]["continue"]})
    assert [i["metadata"]["name"] for i in second["items"]] == ["c"]
    assert second["metadata"]["continue"] == ""


async def test_the_next_page_of_a_list_whose_writes_since_are_no_longer_retained_is_410_expired() -> None:
    async with DevCluster(history=2) as api:
        await _labelled(api)
        status, first = await api.client.list(rb_path(), limit="2")
        assert status == 200
        for replicas in (2, 3, 4):
            assert (await api.client.patch(rb_path("c"), {"spec": {"replicas": replicas}}))[0] == 200

        status, body = await api.client.list(rb_path(), limit="2", **{"continue": first["metadata"]["continue"]})

    assert (status, body["reason"]) == (410, "Expired")
    assert body["message"].startswith("The provided continue parameter is too old")


async def test_later_pages_select_among_the_objects_as_they_were_when_the_list_began() -> None:
    async with DevCluster() as api:
        await _labelled(api)  # a and b have an env label, c has none
        status, first = await api.client.list(rb_path(), limit="1", labelSelector="env")
        assert [i["metadata"]["name"] for i in first["items"]] == ["a"]
        assert (await api.client.patch(rb_path("b"), {"metadata": {"labels": {"env": None}}}))[0] == 200
        assert (await api.client.patch(rb_path("c"), {"metadata": {"labels": {"env": "prod"}}}))[0] == 200
        later = rb_body("bb")
        later["metadata"]["labels"] = {"env": "prod"}
        assert (await api.client.create(rb_path(), later))[0] == 201

        status, second = await api.client.list(rb_path(), limit="1", labelSelector="env",
                                               **{"continue": first["metadata"]["continue"]})

    assert status == 200
    assert [(i["metadata"]["name"], i["metadata"]["labels"]) for i in second["items"]] == [
        ("b", {"env": "dev", "tier": "3"})]
    assert (second["metadata"]["resourceVersion"], second["metadata"]["continue"]) == (
        first["metadata"]["resourceVersion"], "")


async def test_create_of_an_existing_name_is_409_already_exists(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.create(rb_path(), rb_body("rb1"))
    assert status == 409
    assert body == status_of(409, "AlreadyExists", 'resourcebindings.work.karmada.io "rb1" already exists',
                             {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings"})


async def test_create_ignores_status_when_there_is_a_status_subresource(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["status"] = {"schedulerObservedGeneration": 7}
    status, created = await api.client.create(rb_path(), body)
    assert status == 201
    assert "status" not in created


async def test_put_with_the_current_version_replaces_the_object(api: DevCluster, rb1: dict[str, Any]) -> None:
    rb1["spec"]["replicas"] = 5
    status, body = await api.client.put(rb_path("rb1"), rb1)
    assert status == 200
    assert body["spec"]["replicas"] == 5
    assert body["metadata"]["generation"] == 2
    assert int(body["metadata"]["resourceVersion"]) > int(rb1["metadata"]["resourceVersion"])


async def test_put_with_a_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    rb1["spec"]["replicas"] = 5
    status, body = await api.client.put(rb_path("rb1"), rb1)
    assert (status, body) == (409, CONFLICT)
    assert api.store.get("rb", "rb1", "default")["spec"]["replicas"] == 2


async def test_put_of_a_missing_object_is_404(api: DevCluster) -> None:
    status, body = await api.client.put(rb_path("ghost"), rb_body("ghost"))
    assert status == 404
    assert body["reason"] == "NotFound"


async def test_merge_patch_merges_maps_replaces_lists_and_removes_nulls(
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


async def test_merge_patch_with_the_current_version_succeeds(api: DevCluster, rb1: dict[str, Any]) -> None:
    rv = rb1["metadata"]["resourceVersion"]
    status, body = await api.client.patch(rb_path("rb1"), {"metadata": {"resourceVersion": rv},
                                                          "spec": {"replicas": 9}})
    assert (status, body["spec"]["replicas"]) == (200, 9)
    assert body["metadata"]["resourceVersion"] == str(int(rv) + 1)


async def test_merge_patch_with_a_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    stale = rb1["metadata"]["resourceVersion"]
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    status, body = await api.client.patch(rb_path("rb1"), {"metadata": {"resourceVersion": stale},
                                                          "spec": {"replicas": 9}})
    assert (status, body) == (409, CONFLICT)
    assert api.store.get("rb", "rb1", "default")["spec"]["replicas"] == 2


async def test_status_patch_with_a_stale_version_is_409_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
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


async def test_json_patch_with_a_failed_test_is_422_and_changes_nothing(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    status, body = await api.client.patch(rb_path("rb1"), [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
    ], kind="json")
    assert status == 422
    assert body == status_of(422, "Invalid", "the server rejected our request due to an error in our request", {})
    assert api.store.get("rb", "rb1", "default") == rb1


async def test_json_patch_replacing_the_version_is_a_precondition(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}], kind="json")
    assert (status, body) == (409, CONFLICT)


async def test_strategic_merge_patch_on_a_custom_resource_is_415(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}}, kind="strategic")
    assert status == 415
    assert body == status_of(
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


async def test_a_body_that_is_not_json_is_400(api: DevCluster, rb1: dict[str, Any]) -> None:
    reply = await api.client.request("PATCH", rb_path("rb1"), b"{nope",
                                     content_type="application/merge-patch+json")
    assert reply.status == 400
    assert reply.body["reason"] == "BadRequest"


async def test_writes_to_the_main_resource_ignore_status(api: DevCluster, rb1: dict[str, Any]) -> None:
    await api.client.patch(rb_path("rb1", sub="status"), {"status": {"schedulerObservedGeneration": 1}})
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 3},
                                                          "status": {"schedulerObservedGeneration": 99}})
    assert status == 200
    assert body["status"] == {"schedulerObservedGeneration": 1}
    assert body["spec"]["replicas"] == 3


async def test_put_to_the_main_resource_keeps_the_stored_status(api: DevCluster, rb1: dict[str, Any]) -> None:
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


async def test_status_of_a_cluster_scoped_resource(api: DevCluster) -> None:
    await api.client.create(cluster_path(), {"metadata": {"name": "m1"}, "spec": {"syncMode": "Push"}})
    _, cluster = await api.client.get(cluster_path("m1"))
    status, body = await api.client.put(cluster_path("m1", "status"), {
        "metadata": {"name": "m1", "resourceVersion": cluster["metadata"]["resourceVersion"]},
        "status": {"kubernetesVersion": "v1.30"}})
    assert (status, body["status"]) == (200, {"kubernetesVersion": "v1.30"})
    status, body = await api.client.get(cluster_path("m1", "status"))
    assert (status, body["status"]) == (200, {"kubernetesVersion": "v1.30"})


async def test_delete_without_finalizers_removes_the_object(api: DevCluster, rb1: dict[str, Any]) -> None:
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


async def test_the_object_goes_when_its_last_finalizer_goes(api: DevCluster) -> None:
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


async def test_no_new_finalizers_on_a_deleting_object(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["finalizers"] = ["a/one"]
    await api.client.create(rb_path(), body)
    await api.client.delete(rb_path("rb1"))
    status, reply = await api.client.patch(rb_path("rb1"), {"metadata": {"finalizers": ["a/one", "a/new"]}})
    assert status == 422
    assert reply["details"]["causes"][0]["field"] == "metadata.finalizers"


async def test_delete_with_a_stale_resource_version_precondition_is_409(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    status, body = await api.client.delete(rb_path("rb1"), {"preconditions": {"resourceVersion": "1"}})
    assert status == 409
    assert body["reason"] == "Conflict"
    assert (await api.client.get(rb_path("rb1")))[0] == 200


async def test_delete_of_a_missing_object_is_404(api: DevCluster) -> None:
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


async def test_a_body_nested_too_deeply_is_a_bad_request_not_a_crash(api: DevCluster) -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    async with aiohttp.ClientSession() as session, session.post(
        api.url + "/api/v1/namespaces", data=deep, headers={"Content-Type": "application/json"}
    ) as response:
        answer = await response.json()
    assert (response.status, answer["reason"]) == (400, "BadRequest")
    assert "nested too deeply" in answer["message"]
