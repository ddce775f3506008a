"""devcluster's typed field sets (kubectl/fieldsets.py) piece by piece; tests/conformance holds
managedFields and server-side apply whole against kube-apiserver."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster.kubectl import fieldsets
from binding_scheduler.devcluster.patch import merge_patch

MAP_LIST = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}}
SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "items": MAP_LIST,
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "atomic": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "n": {"type": "integer"}}}}}


def test_field_set_has_leaves_and_items() -> None:
    value = {"spec": {"items": [{"name": "a", "n": 1}], "tags": ["x"], "atomic": ["y"], "labels": {"k": "v"},
                      "n": 1}}
    assert fieldsets.field_set(value, SCHEMA) == {
        ("f:spec", "f:items", 'k:{"name":"a"}'), ("f:spec", "f:items", 'k:{"name":"a"}', "f:name"),
        ("f:spec", "f:items", 'k:{"name":"a"}', "f:n"), ("f:spec", "f:tags", 'v:"x"'), ("f:spec", "f:atomic"),
        ("f:spec", "f:labels", "f:k"), ("f:spec", "f:n")}


def test_merging_lists_of_type_map_keeps_both_orders() -> None:
    live = {"spec": {"items": [{"name": "a", "n": 1}, {"name": "b"}, {"name": "c"}]}}
    config = {"spec": {"items": [{"name": "c", "n": 3}, {"name": "d"}]}}
    merged = fieldsets.merge(live, config, SCHEMA)
    assert merged["spec"]["items"] == [{"name": "a", "n": 1}, {"name": "b"}, {"name": "c", "n": 3}, {"name": "d"}]
    assert fieldsets.merge({"spec": {"atomic": ["a"]}}, {"spec": {"atomic": ["b"]}}, SCHEMA) == {
        "spec": {"atomic": ["b"]}}


@pytest.mark.parametrize("patch", [
    {"spec": {"n": 2}},
    {"spec": {"items": [{"name": "a", "n": 5}]}},
    {"spec": {"labels": {"k": None, "new": "v"}}},
    {"spec": {"tags": None}},
    {"spec": None},
    {"metadata": {"labels": {"a": "b"}}, "spec": {"labels": {}}},
])
def test_touched_comparison_equals_full_comparison(patch: dict[str, Any]) -> None:
    live = {"metadata": {"name": "x"}, "spec": {"items": [{"name": "a", "n": 1}], "tags": ["x"], "labels": {"k": "v"},
                                                "n": 1}}
    new = merge_patch(live, patch)
    assert fieldsets.compare_touched(live, new, SCHEMA, patch) == fieldsets.compare(live, new, SCHEMA)
