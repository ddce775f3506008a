"""devcluster's field ownership (kubectl/managed.py) piece by piece; tests/conformance holds the whole against
kube-apiserver."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster import Registry
from binding_scheduler.devcluster.cluster import default_crds_dir
from binding_scheduler.devcluster.kubectl import managed
from binding_scheduler.devcluster.patch import merge_patch
from binding_scheduler.devcluster.resources import load_crds, types_from_crd

MAP_LIST = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}}
SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "items": MAP_LIST,
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "atomic": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "n": {"type": "integer"}}}}}


def test_a_field_set_has_leaves_items_and_empty_or_undeclared_entries() -> None:
    value = {"spec": {"items": [{"name": "a", "n": 1}], "tags": ["x"], "atomic": ["y"], "labels": {"k": "v"},
                      "n": 1}}
    assert managed.field_set(value, SCHEMA) == {
        ("f:spec", "f:items", 'k:{"name":"a"}'), ("f:spec", "f:items", 'k:{"name":"a"}', "f:name"),
        ("f:spec", "f:items", 'k:{"name":"a"}', "f:n"), ("f:spec", "f:tags", 'v:"x"'), ("f:spec", "f:atomic"),
        ("f:spec", "f:labels", "f:k"), ("f:spec", "f:n")}


def test_fields_v1_round_trips_and_marks_members_with_children() -> None:
    paths = {("f:spec",), ("f:spec", "f:n"), ("f:spec", "f:items", 'k:{"name":"a"}'),
             ("f:spec", "f:items", 'k:{"name":"a"}', "f:n")}
    encoded = managed.to_fields_v1(paths)
    assert encoded == {"f:spec": {".": {}, "f:items": {'k:{"name":"a"}': {".": {}, "f:n": {}}}, "f:n": {}}}
    assert managed.from_fields_v1(encoded) == paths


def test_a_conflict_path_prints_as_kube_prints_it() -> None:
    assert managed.path_text(("f:spec", "f:items", 'k:{"name":"a"}', "f:n")) == '.spec.items[name="a"].n'
    assert managed.path_text(("f:spec", "f:tags", 'v:"x"')) == '.spec.tags[="x"]'


def test_merging_lists_of_type_map_keeps_both_orders() -> None:
    live = {"spec": {"items": [{"name": "a", "n": 1}, {"name": "b"}, {"name": "c"}]}}
    config = {"spec": {"items": [{"name": "c", "n": 3}, {"name": "d"}]}}
    merged = managed.merge(live, config, SCHEMA)
    assert merged["spec"]["items"] == [{"name": "a", "n": 1}, {"name": "b"}, {"name": "c", "n": 3}, {"name": "d"}]
    assert managed.merge({"spec": {"atomic": ["a"]}}, {"spec": {"atomic": ["b"]}}, SCHEMA) == {
        "spec": {"atomic": ["b"]}}


@pytest.mark.parametrize("patch", [
    {"spec": {"n": 2}},
    {"spec": {"items": [{"name": "a", "n": 5}]}},
    {"spec": {"labels": {"k": None, "new": "v"}}},
    {"spec": {"tags": None}},
    {"spec": None},
    {"metadata": {"labels": {"a": "b"}}, "spec": {"labels": {}}},
])
def test_comparing_where_a_merge_patch_touched_finds_what_a_full_comparison_finds(patch: dict[str, Any]) -> None:
    live = {"metadata": {"name": "x"}, "spec": {"items": [{"name": "a", "n": 1}], "tags": ["x"], "labels": {"k": "v"},
                                                "n": 1}}
    new = merge_patch(live, patch)
    assert managed.compare_touched(live, new, SCHEMA, patch) == managed.compare(live, new, SCHEMA)


def test_an_update_takes_what_it_changes_from_the_others() -> None:
    registry = Registry.with_builtins()
    for crd in load_crds(default_crds_dir()):
        registry.add_all(types_from_crd(crd))
    rb = registry.resolve("resourcebindings")
    created = {"apiVersion": rb.api_version, "kind": rb.kind, "metadata": {"name": "x"},
               "spec": {"replicas": 1, "resource": {"kind": "Deployment", "name": "w", "apiVersion": "apps/v1"}}}
    managed.record_update(rb, None, created, "a", "", "2024-01-01T00:00:00Z")
    scaled = merge_patch(created, {"spec": {"replicas": 2}})
    managed.record_update(rb, created, scaled, "b", "", "2024-01-01T00:00:01Z", {"spec": {"replicas": 2}})
    owners = {entry["manager"]: entry["fieldsV1"] for entry in scaled["metadata"]["managedFields"]}
    assert owners == {"a": {"f:spec": {".": {}, "f:resource": {".": {}, "f:apiVersion": {}, "f:kind": {},
                                                               "f:name": {}}}},
                      "b": {"f:spec": {"f:replicas": {}}}}
