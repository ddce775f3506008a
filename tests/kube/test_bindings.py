"""Fenced binding writes: Karmada's merge-patch shapes plus the resourceVersion precondition."""

from __future__ import annotations

import json
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, BindingRef, Conflict, patch_schedule_result, patch_status
from tests.kube.helpers import RB_GROUP, RB_VERSION, rb_path

PLACEMENT = json.dumps({"clusterAffinity": {"clusterNames": ["m1", "m2"]}})
RB = BindingRef("ResourceBinding", "rb1", "default")


def test_binding_refs_name_their_paths() -> None:
    assert RB.path() == "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/rb1"
    assert BindingRef("ClusterResourceBinding", "crb").path("status") == (
        "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/crb/status")
    assert (RB.key, BindingRef("ClusterResourceBinding", "crb").key) == ("default/rb1", "crb")


def test_binding_refs_reject_missing_or_extra_namespace() -> None:
    with pytest.raises(ValueError, match="needs a namespace"):
        BindingRef("ResourceBinding", "rb1")
    with pytest.raises(ValueError, match="cluster-scoped"):
        BindingRef("ClusterResourceBinding", "crb", "default")


def test_binding_ref_is_read_from_object() -> None:
    obj = {"kind": "ResourceBinding", "metadata": {"name": "rb1", "namespace": "default"}}
    assert BindingRef.of(obj) == RB


def test_cluster_resource_binding_ref_is_read_with_no_namespace() -> None:
    ref = BindingRef.of({"kind": "ClusterResourceBinding", "metadata": {"name": "crb"}})
    assert (ref, ref.namespace, ref.key) == (BindingRef("ClusterResourceBinding", "crb"), "", "crb")


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        ({"kind": "Deployment", "metadata": {"name": "web", "namespace": "x"}}, "not a binding kind: 'Deployment'"),
        ({"metadata": {"name": "web"}}, "not a binding: the object has no kind"),
        ({"kind": "ResourceBinding", "metadata": {"namespace": "default"}}, "a binding reference needs a name"),
        ({"kind": "ClusterResourceBinding", "metadata": {}}, "a binding reference needs a name"),
        ({"kind": "ResourceBinding", "metadata": {"name": "rb1"}}, "ResourceBinding 'rb1' needs a namespace"),
        ({"kind": "ClusterResourceBinding", "metadata": {"name": "crb", "namespace": "default"}},
         "ClusterResourceBinding 'crb' is cluster-scoped, not in 'default'"),
    ],
)
def test_invalid_object_gives_no_ref(obj: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as caught:
        BindingRef.of(obj)
    assert str(caught.value) == error


def test_ref_of_another_kind_is_refused_with_kind() -> None:
    with pytest.raises(ValueError) as caught:
        BindingRef("Work", "w1", "default")  # type: ignore[arg-type]
    assert str(caught.value) == "not a binding kind: 'Work'"


async def test_result_patch_has_karmadas_shape(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    rv = rb1["metadata"]["resourceVersion"]
    answer = await patch_schedule_result(client, RB, rv, PLACEMENT, [{"name": "m1", "replicas": 2},
                                                                      {"name": "m2", "replicas": 1}])
    (entry,) = api.journal
    assert (entry.method, entry.path, entry.status) == ("PATCH", rb_path("rb1"), 200)
    assert entry.body == {
        "metadata": {"resourceVersion": rv, "annotations": {"policy.karmada.io/applied-placement": PLACEMENT}},
        "spec": {"clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]},
    }
    assert answer["metadata"]["generation"] == 2
    assert answer["metadata"]["resourceVersion"] != rv
    assert answer["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]


async def test_empty_result_writes_clusters_null(api: DevCluster, client: ApiClient, rb1: dict[str, Any]) -> None:
    answer = await patch_schedule_result(client, RB, rb1["metadata"]["resourceVersion"], PLACEMENT, [])
    assert api.journal[-1].body["spec"] == {"clusters": None}
    assert "clusters" not in answer["spec"]


async def test_zero_replicas_are_omitted_from_target_clusters(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    await patch_schedule_result(client, RB, rb1["metadata"]["resourceVersion"], PLACEMENT,
                                [{"name": "m1", "replicas": 0}])
    assert api.journal[-1].body["spec"] == {"clusters": [{"name": "m1"}]}


async def test_no_placement_leaves_annotation_alone(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    await patch_schedule_result(client, RB, rb1["metadata"]["resourceVersion"], None, [{"name": "m1"}])
    assert api.journal[-1].body["metadata"] == {"resourceVersion": rb1["metadata"]["resourceVersion"]}


async def test_stale_version_is_conflict_and_changes_nothing(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    stale = rb1["metadata"]["resourceVersion"]
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 4}})
    newer = api.store.get("rb", "rb1", "default")
    with pytest.raises(Conflict):
        await patch_schedule_result(client, RB, stale, PLACEMENT, [{"name": "m1", "replicas": 4}])
    with pytest.raises(Conflict):
        await patch_status(client, RB, stale, {"schedulerObservedGeneration": 1})
    assert api.store.get("rb", "rb1", "default") == newer


async def test_status_patch_uses_spec_writes_version(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    written = await patch_schedule_result(client, RB, rb1["metadata"]["resourceVersion"], PLACEMENT,
                                          [{"name": "m1", "replicas": 3}])
    condition = {"type": "Scheduled", "status": "True", "reason": "Success",
                 "message": "Binding has been scheduled successfully.",
                 "lastTransitionTime": "2024-01-01T00:00:00Z"}
    status = {"conditions": [condition], "schedulerObservedGeneration": 1,
              "lastScheduledTime": "2024-01-01T00:00:00Z"}
    await patch_status(client, RB, written["metadata"]["resourceVersion"], status)
    entry = api.journal[-1]
    assert (entry.method, entry.path, entry.status) == ("PATCH", rb_path("rb1", sub="status"), 200)
    assert entry.body == {"metadata": {"resourceVersion": written["metadata"]["resourceVersion"]},
                          "status": status}
    stored = await client.get(RB.path())
    assert stored["status"] == status
    assert (stored["spec"], stored["metadata"]["generation"]) == (written["spec"], 2)


async def test_cluster_resource_bindings_are_written_cluster_scoped(api: DevCluster, client: ApiClient) -> None:
    path = f"/apis/{RB_GROUP}/{RB_VERSION}/clusterresourcebindings"
    crb = await client.create(path, {"apiVersion": f"{RB_GROUP}/{RB_VERSION}", "kind": "ClusterResourceBinding",
                                     "metadata": {"name": "crb"},
                                     "spec": {"resource": {"apiVersion": "v1", "kind": "Namespace", "name": "x"}}})
    ref = BindingRef.of(crb)
    answer = await patch_schedule_result(client, ref, crb["metadata"]["resourceVersion"], PLACEMENT, [{"name": "m1"}])
    assert answer["spec"]["clusters"] == [{"name": "m1"}]
    assert api.journal[-1].path == f"{path}/crb"


async def test_fenced_write_needs_version(api: DevCluster, client: ApiClient) -> None:
    for write in (patch_schedule_result(client, RB, "", PLACEMENT, None), patch_status(client, RB, "", {})):
        with pytest.raises(ValueError) as caught:
            await write
        assert str(caught.value) == "a fenced write needs the resourceVersion its decision was computed from"
    assert list(api.journal) == []
