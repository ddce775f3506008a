"""CRD schemas applied as kube-apiserver applies them: pruning, nulls, defaults, validation (422 with causes)."""

from __future__ import annotations

from typing import Any

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.devcluster.schema import Schema
from tests.devcluster.helpers import rb_body, rb_path

CONFIG_PATH = "/apis/config.binding-scheduler.io/v1alpha1/namespaces/default/schedulerconfigurations"


def _config(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
            "metadata": {"name": "sched"}, "spec": spec}


async def test_defaults_fill_missing_fields_at_every_level(api: DevCluster) -> None:
    status, body = await api.client.create(CONFIG_PATH, _config(estimator={}))
    assert status == 201
    spec = body["spec"]
    assert (spec["schedulerName"], spec["workers"], spec["plugins"]) == ("default-scheduler", 1, ["*"])
    assert spec["estimator"]["enabled"] is False


async def test_numeric_bounds_are_checked(api: DevCluster) -> None:
    status, body = await api.client.create(CONFIG_PATH, _config(workers=0))
    assert (status, body["details"]["causes"]) == (422, [{
        "reason": "FieldValueInvalid", "field": "spec.workers",
        "message": "Invalid value: 0: spec.workers in body should be greater than or equal to 1"}])


async def test_other_constraints_are_always_checked(api: DevCluster) -> None:
    status, body = await api.client.create(CONFIG_PATH, _config(schedulerName=""))
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.schedulerName")


async def test_write_through_status_is_validated_and_pruned(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1", sub="status"), {"status": {"conditions": [{
        "type": "Scheduled", "status": "True", "reason": "not a reason", "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z"}]}})
    assert (status, [c["field"] for c in body["details"]["causes"]]) == (422, ["status.conditions[0].reason"])
    status, body = await api.client.patch(rb_path("rb1", sub="status"), {"status": {"unknown": 1}})
    assert (status, body["status"]) == (200, {})  # as kube-apiserver: pruned to an empty object


async def test_create_is_validated_before_name_is_checked_for_existence(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    status, body = await api.client.create(rb_path(), rb_body("rb1", replicas="x"))
    assert (status, body["reason"]) == (422, "Invalid")


def test_map_lists_refuse_duplicate_keys_and_sets_duplicate_items() -> None:
    schema = Schema({"type": "object", "properties": {
        "byName": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    }})
    obj = {"byName": [{"name": "a", "v": 1}, {"name": "a", "v": 2}], "tags": ["x", "y", "x"]}
    assert [(c["field"], c["reason"]) for c in schema.validate(obj)] == [
        ("byName[1]", "FieldValueDuplicate"), ("tags[2]", "FieldValueDuplicate")]


def test_nullable_fields_keep_null_and_int_or_string_takes_both() -> None:
    schema = Schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "maybe": {"type": "string", "nullable": True},
        "quantity": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    }}}})
    obj: dict[str, Any] = {"spec": {"maybe": None, "quantity": 2}}
    schema.normalize(obj)
    assert obj == {"spec": {"maybe": None, "quantity": 2}}
    assert schema.validate(obj) == []
    assert schema.validate({"spec": {"quantity": "2Gi"}}) == []
    assert [c["reason"] for c in schema.validate({"spec": {"quantity": True}})] == ["FieldValueTypeInvalid"]
