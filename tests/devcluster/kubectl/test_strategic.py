"""Strategic merge patches (kubectl/strategic.py), what client-side `kubectl apply` sends for built-in kinds: lists
merge by the merge key of kube-apiserver's schema, with the directives. tests/devcluster/kubectl/test_kubectl.py
and tests/conformance hold them through kubectl and against kube-apiserver."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.devcluster.kubectl.builtin_schemas import builtin_schema
from binding_scheduler.devcluster.kubectl.strategic import strategic_merge
from binding_scheduler.devcluster.patch import PatchError
from tests.devcluster.helpers import rb_path, status_of

SERVICE = builtin_schema("", "v1", "Service")
LIVE = {"metadata": {"finalizers": ["x", "y"]},
        "spec": {"type": "ClusterIP", "selector": {"app": "a"},
                 "ports": [{"name": "grpc", "port": 1}, {"name": "metrics", "port": 2}]}}


def ports(patched: dict[str, Any]) -> list[dict[str, Any]]:
    return list(patched["spec"]["ports"])


def test_list_with_merge_key_merges_item_by_item() -> None:
    patched = strategic_merge(LIVE, {"spec": {"ports": [{"port": 2, "name": "m2"}, {"port": 3}]}}, SERVICE)
    assert ports(patched) == [{"name": "grpc", "port": 1}, {"name": "m2", "port": 2}, {"port": 3}]


def test_patch_delete_removes_item_with_key() -> None:
    patched = strategic_merge(LIVE, {"spec": {"ports": [{"port": 1, "$patch": "delete"}]}}, SERVICE)
    assert ports(patched) == [{"name": "metrics", "port": 2}]


def test_set_element_order_reorders_items() -> None:
    patched = strategic_merge(LIVE, {"spec": {"$setElementOrder/ports": [{"port": 2}, {"port": 1}]}}, SERVICE)
    assert [port["port"] for port in ports(patched)] == [2, 1]


def test_delete_from_primitive_list_removes_values() -> None:
    patched = strategic_merge(LIVE, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, SERVICE)
    assert patched["metadata"]["finalizers"] == ["y"]


def test_patch_replace_replaces_map_and_retain_keys_drops_rest() -> None:
    replaced = strategic_merge(LIVE, {"spec": {"selector": {"$patch": "replace", "app": "b"}}}, SERVICE)
    assert replaced["spec"]["selector"] == {"app": "b"}
    retained = strategic_merge(LIVE, {"spec": {"$retainKeys": ["ports", "selector"], "selector": {"c": "d"}}}, SERVICE)
    assert set(retained["spec"]) == {"ports", "selector"}


def test_unknown_directive_is_patch_error() -> None:
    with pytest.raises(PatchError):
        strategic_merge(LIVE, {"spec": {"$patch": "explode"}}, SERVICE)


async def test_strategic_merge_patch_on_custom_resource_is_415(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}}, kind="strategic")
    assert status == 415
    assert body == status_of(
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
